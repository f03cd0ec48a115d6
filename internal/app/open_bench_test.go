package app_test

import (
	"context"
	"testing"

	"github.com/nexus-mcp/nexus/internal/app"
)

// BenchmarkOpen is what "nexus serve" and "nexus stdio" spend building the
// App on an existing SQLite database (the start-up budget of issue 25:
// start to the first tools/list ≤ 25 ms):
//
//	go test ./internal/app -run '^$' -bench Open -benchtime 50x -cpuprofile cpu.out
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: dir, Transport: "stdio"})
	if err != nil {
		b.Fatal(err)
	}
	a.Close()
	b.ResetTimer()
	for range b.N {
		a, err := app.Open(ctx, app.Config{DataDir: dir, Transport: "stdio"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		a.Close()
		b.StartTimer()
	}
}
