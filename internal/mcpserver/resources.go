package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addResources registers the tmux:// resources and their templates.
func (s *Server) addResources(m *mcp.Server) {}
