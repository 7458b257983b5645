package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addPrompts registers the prompts the tier allows.
func (s *Server) addPrompts(m *mcp.Server) {}
