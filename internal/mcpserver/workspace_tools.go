package mcpserver

// workspaceTools returns build_workspace.
func (s *Server) workspaceTools() []toolDef { return nil }
