package bounded

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
	deliberateBreaks := []string{
		// Issue 27: the overview stays within about 2,000 tokens whatever
		// the catalog's size, so a large one leaves out the modes'
		// descriptions, or lists toolboxes by their sizes instead of their
		// servers.
		"get_tools",
	}
	registrytest.Check(t, registrytest.Snapshots{
		Dir:     filepath.Join("testdata", "toolsnaps"),
		Toolbox: registry.BuiltinToolbox, Server: ServerName,
		Defs:   (&Surface{}).tools(),
		Update: *update, Breaks: deliberateBreaks,
	})
}
