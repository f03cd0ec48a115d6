package workbench

import (
	"fmt"
	"testing"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// BenchmarkListingsPerSearch is what every search_tools call asks the
// workbench (ListingsVersion, Unlisted) with 700 servers none of which is
// connected, each with a kept listing.
//
//	go test ./internal/workbench -run '^$' -bench ListingsPerSearch
func BenchmarkListingsPerSearch(b *testing.B) {
	cfg := &config.Config{Toolboxes: map[string]*config.Toolbox{}}
	for t := range 70 {
		tb := &config.Toolbox{Name: fmt.Sprintf("tb%d", t), Servers: map[string]*config.Server{}}
		for s := range 10 {
			name := fmt.Sprintf("s%d", s)
			tb.Servers[name] = &config.Server{Name: name, URL: "http://127.0.0.1:1/" + name, Transport: config.StreamableHTTP, Args: []string{"a", "b"}}
			tb.Order = append(tb.Order, name)
		}
		cfg.Toolboxes[tb.Name] = tb
		cfg.Order = append(cfg.Order, tb.Name)
	}
	m := NewManager(cfg, registry.New(), Options{})
	defer m.Close()
	for _, tb := range m.list() {
		for _, s := range tb.servers {
			m.listings[serverKey{s.toolbox, s.name}] = listing{fingerprint: s.print}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		m.ListingsVersion()
		if len(m.Unlisted()) != 0 {
			b.Fatal("unlisted")
		}
	}
}
