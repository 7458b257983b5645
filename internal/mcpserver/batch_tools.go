package mcpserver

// batchTools returns the three batch tools.
func (s *Server) batchTools() []toolDef { return nil }
