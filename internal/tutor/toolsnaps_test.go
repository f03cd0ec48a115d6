package tutor

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/registry/registrytest"
)

var update = flag.Bool("update", false, "rewrite the tool snapshots (testdata/toolsnaps)")

// TestToolSnapshots pins every tool's listing and derived output schema.
func TestToolSnapshots(t *testing.T) {
	// deliberateBreaks are the tools whose snapshot may change in a
	// breaking way (ADR-012: changes are additive): list a tool only with
	// the change that deliberately breaks its clients, and say why.
	deliberateBreaks := []string{}
	s := New(nil, nil, Options{})
	var defs []registry.Def
	defs = append(defs, s.sessionTools()...)
	defs = append(defs, s.courseTools()...)
	defs = append(defs, s.transferTools()...)
	defs = append(defs, s.userTools()...)
	defs = append(defs, s.byokTools()...)
	registrytest.Check(t, registrytest.Snapshots{
		Dir:     filepath.Join("testdata", "toolsnaps"),
		Toolbox: registry.BuiltinToolbox, Server: ServerName,
		Defs:   defs,
		Update: *update, Breaks: deliberateBreaks,
	})
}
