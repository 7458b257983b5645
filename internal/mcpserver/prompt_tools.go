package mcpserver

// promptTools returns the prompts offered as one tool (TMCP_PROMPTS_AS_TOOLS=1).
func (s *Server) promptTools() []toolDef { return nil }
