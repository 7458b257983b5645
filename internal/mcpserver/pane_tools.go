package mcpserver

// paneTools returns respawn_pane, clear_pane, copy mode and find_pane_by_position.
func (s *Server) paneTools() []toolDef { return nil }
