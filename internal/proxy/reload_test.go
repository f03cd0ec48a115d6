package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/config"
)

// TestSetConfig: a reloaded configuration serves an added server from the
// next request, answers 404 for a removed one, and closes the endpoint of
// a changed one: its client's session ends, and a new client reaches the
// server under its new configuration.
func TestSetConfig(t *testing.T) {
	srv := downstreams[0].start(t) // stdio: its process ends with the endpoint
	cfg := testConfig(srv)
	p, ts := startProxy(t, cfg)
	cs := connect(t, newClient(&events{}), ts.URL+"/mcp/servers/tb/s")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	// "s" changes (a tool filter), "filtered" goes, "added" comes.
	changed := *srv
	changed.ToolFilters = []string{"!hidden"}
	next := &config.Config{Toolboxes: map[string]*config.Toolbox{"tb": {Name: "tb",
		Servers: map[string]*config.Server{"s": &changed, "added": srv}, Order: []string{"s", "added"}}}, Order: []string{"tb"}}
	p.SetConfig(next)

	if _, err := cs.ListTools(context.Background(), nil); err == nil {
		t.Error("the changed server's old session still answers")
	}
	resp, err := http.Post(ts.URL+"/mcp/servers/tb/filtered", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a removed server: %d, want 404", resp.StatusCode)
	}
	for _, name := range []string{"s", "added"} {
		cs := connect(t, newClient(&events{}), ts.URL+"/mcp/servers/tb/"+name)
		hidden := false
		for tool, err := range cs.Tools(context.Background(), nil) { // every page
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			hidden = hidden || tool.Name == "hidden"
		}
		if hidden != (name == "added") {
			t.Errorf("%s lists the tool hidden: %v", name, hidden)
		}
	}
}
