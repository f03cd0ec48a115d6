package tutor

import "github.com/nexus-mcp/nexus/internal/registry"

// courseIndex is the in-memory search index of the catalog.
type courseIndex struct{}

func (s *Server) courseTools() []registry.Def { return nil }
