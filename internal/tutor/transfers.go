package tutor

import "github.com/nexus-mcp/nexus/internal/registry"

func (s *Server) transferTools() []registry.Def { return nil }
