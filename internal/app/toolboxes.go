package app

import (
	"context"

	"github.com/nexus-mcp/nexus/internal/agents"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// toolboxes presents the workbench to the surfaces ([agents.Toolboxes]).
type toolboxes struct{ m *workbench.Manager }

func (t toolboxes) List() []agents.Toolbox {
	var out []agents.Toolbox
	for _, tb := range t.m.Toolboxes() {
		out = append(out, agents.Toolbox{Name: tb.Name, Description: tb.Description, Servers: tb.Servers})
	}
	return out
}

func (t toolboxes) Open(ctx context.Context, name string) (*agents.Opened, error) {
	o, err := t.m.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &agents.Opened{Toolbox: o.Toolbox, Description: o.Description, ServersConnected: o.ServersConnected, ServerErrors: o.ServerErrors}, nil
}

func (t toolboxes) OpenAll(ctx context.Context) { t.m.OpenAll(ctx) }
