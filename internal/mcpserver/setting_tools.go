package mcpserver

// settingTools returns options, environment, hooks and pipe_pane.
func (s *Server) settingTools() []toolDef { return nil }
