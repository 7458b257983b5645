package mcpserver

// arrangeTools returns the arranging tools: selecting, resizing, swapping and moving panes and windows, titles.
func (s *Server) arrangeTools() []toolDef { return nil }
