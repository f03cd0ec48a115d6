package events_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// BenchmarkEventLatency measures how long an event takes from one replica's
// Publish to another replica's subscriber, one event at a time, on each
// engine: p50 and p99 in microseconds.
//
//	NEXUS_TEST_POSTGRES_URL=... NEXUS_TEST_NATS_URL=nats://127.0.0.1:4222 \
//	  go test ./internal/events -run '^$' -bench EventLatency -benchtime 2000x
func BenchmarkEventLatency(b *testing.B) {
	engines := map[string]func(b *testing.B) (string, *store.Store){
		"postgres": func(b *testing.B) (string, *store.Store) { return "", storetest.OpenTestPostgres(b) },
		"nats": func(b *testing.B) (string, *store.Store) {
			u := natsURL(b)
			return u + "/nexus-bench-" + fmt.Sprint(time.Now().UnixNano()), nil
		},
	}
	for _, name := range []string{"postgres", "nats"} {
		b.Run(name, func(b *testing.B) {
			url, st := engines[name](b)
			var buses []*events.Bus
			for i := range 2 {
				bus, err := events.Open(context.Background(), events.Options{URL: url, Store: st, Origin: fmt.Sprint("r", i)})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(bus.Close)
				buses = append(buses, bus)
			}
			got := make(chan time.Time, 1)
			buses[1].Subscribe("bench", func(events.Event) { got <- time.Now() })
			lat := make([]time.Duration, 0, b.N)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if err := buses[0].Publish(ctx, "bench", start.UnixNano()); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-got:
					lat = append(lat, at.Sub(start))
				case <-time.After(5 * time.Second):
					b.Fatal("an event did not arrive within 5 s")
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Nanoseconds()) / 1000 }
			b.ReportMetric(q(0.50), "p50-µs")
			b.ReportMetric(q(0.99), "p99-µs")
		})
	}
}
