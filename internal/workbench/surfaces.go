package workbench

import (
	"context"

	"github.com/nexus-mcp/nexus/internal/agents"
)

// Surfaces presents the manager to the agents and bounded surfaces.
func (m *Manager) Surfaces() agents.Toolboxes { return toolboxes{m} }

// toolboxes adapts a [Manager] to [agents.Toolboxes].
type toolboxes struct{ m *Manager }

func (t toolboxes) List() []agents.Toolbox {
	var out []agents.Toolbox
	for _, tb := range t.m.Toolboxes() {
		out = append(out, agents.Toolbox{Name: tb.Name, Description: tb.Description, Servers: tb.Servers})
	}
	return out
}

func (t toolboxes) Open(ctx context.Context, name string) (*agents.Opened, error) {
	o, err := t.m.Open(ctx, name)
	if o == nil {
		return nil, err
	}
	return &agents.Opened{Toolbox: o.Toolbox, Description: o.Description, ServersConnected: o.ServersConnected,
		ServerErrors: o.ServerErrors, Tools: o.Tools}, err
}

func (t toolboxes) OpenAll(ctx context.Context) { t.m.OpenAll(ctx) }
