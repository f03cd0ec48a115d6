package workbench

import (
	"context"
	"testing"
)

// BenchmarkOpenToolbox3Stdio measures opening a toolbox of three stdio
// servers (the SDK's hello, everything and memory examples): starting the
// processes, the MCP handshakes and listing and registering their tools,
// all three in parallel. Closing is not timed.
func BenchmarkOpenToolbox3Stdio(b *testing.B) {
	cfg := toolboxConfig("local",
		named{"hello", example("hello")},
		named{"everything", example("everything")},
		named{"memory", example("memory")})
	for b.Loop() {
		b.StopTimer()
		m, _ := newManager(b, cfg)
		b.StartTimer()
		o, err := m.Open(context.Background(), "local")
		b.StopTimer()
		if err != nil || len(o.ServersConnected) != 3 {
			b.Fatalf("Open: %v, connected %v, errors %v", err, o.ServersConnected, o.ServerErrors)
		}
		m.Close()
		b.StartTimer()
	}
}
