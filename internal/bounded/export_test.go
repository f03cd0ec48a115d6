package bounded

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// NewSurface builds the surface as [New] does and returns its state, so that
// tests can count the sessions it keeps.
func NewSurface(p *pipeline.Pipeline, o mcpkit.Options) (*Surface, error) { return newSurface(p, o) }

// Server returns the surface's one server.
func (s *Surface) Server() *mcp.Server { return s.server }
