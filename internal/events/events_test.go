package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// natsURL is the NATS server of the tests (NEXUS_TEST_NATS_URL); without it
// the NATS tests are skipped, or fail in CI.
func natsURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("NEXUS_TEST_NATS_URL")
	if u == "" && os.Getenv("CI") != "" {
		t.Fatal("NEXUS_TEST_NATS_URL is not set; in CI the NATS tests must run (scripts/test sets it)")
	}
	if u == "" {
		t.Skip("NEXUS_TEST_NATS_URL is not set; NATS tests skipped (CI sets it)")
	}
	return u
}

// collector records the events a replica's subscriber gets.
type collector struct {
	mu  sync.Mutex
	got []events.Event
}

func (c *collector) add(e events.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, e)
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// replicas opens n buses on one engine, as n replicas do.
func replicas(t *testing.T, n int, url string, st *store.Store) []*events.Bus {
	t.Helper()
	var out []*events.Bus
	for i := range n {
		b, err := events.Open(context.Background(), events.Options{URL: url, Store: st, Origin: fmt.Sprintf("replica-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		if err := b.Ready(context.Background()); err != nil {
			t.Fatalf("replica %d not ready: %v", i, err)
		}
		out = append(out, b)
	}
	return out
}

// TestEventsReachEveryReplicaOnce publishes from each of three replicas and
// requires every replica to get every event of its topic exactly once, and
// none of another topic, on each engine.
func TestEventsReachEveryReplicaOnce(t *testing.T) {
	engines := map[string]func(t *testing.T) (string, *store.Store){
		"postgres": func(t *testing.T) (string, *store.Store) { return "", storetest.OpenTestPostgres(t) },
		"nats": func(t *testing.T) (string, *store.Store) {
			// A subject prefix of this test's own.
			return natsURL(t) + "/nexus-test-" + fmt.Sprint(time.Now().UnixNano()), nil
		},
	}
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			url, st := open(t)
			buses := replicas(t, 3, url, st)
			if buses[0].Engine() != name {
				t.Fatalf("engine %s, want %s", buses[0].Engine(), name)
			}
			cols := make([]*collector, len(buses))
			for i, b := range buses {
				cols[i] = &collector{}
				b.Subscribe("chat.event", cols[i].add)
				b.Subscribe("other", func(e events.Event) { t.Errorf("replica %d got an event of a topic it did not ask for", i) })
			}
			const each = 20
			for i, b := range buses {
				for j := range each {
					if err := b.Publish(context.Background(), "chat.event", map[string]int{"from": i, "seq": j}); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := each * len(buses)
			for i, c := range cols {
				testtools.Eventually(t, 10*time.Second, fmt.Sprintf("replica %d to get %d events", i, want), func() bool { return c.len() >= want })
			}
			time.Sleep(100 * time.Millisecond) // no late duplicates
			for i, c := range cols {
				c.mu.Lock()
				ids := map[string]bool{}
				for _, e := range c.got {
					if ids[e.ID] {
						t.Errorf("replica %d got event %s twice", i, e.ID)
					}
					ids[e.ID] = true
				}
				if len(c.got) != want {
					t.Errorf("replica %d got %d events, want %d", i, len(c.got), want)
				}
				c.mu.Unlock()
			}
		})
	}
}

// TestPostgresListenerResyncs kills the listener's PostgreSQL connection:
// the bus reconnects, calls its resync functions (events may have been
// missed meanwhile) and receives events again.
func TestPostgresListenerResyncs(t *testing.T) {
	st := storetest.OpenTestPostgres(t)
	b := replicas(t, 1, "", st)[0]
	resynced := make(chan struct{}, 4)
	b.OnResync(func(context.Context) { resynced <- struct{}{} })
	c := &collector{}
	b.Subscribe("t", c.add)
	var schema string
	if err := st.DB().QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, "LISTEN "+events.PostgresChannel(schema)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-resynced:
	case <-time.After(15 * time.Second):
		t.Fatal("no resync after the listener's connection was killed")
	}
	if err := b.Publish(context.Background(), "t", "after"); err != nil {
		t.Fatal(err)
	}
	testtools.Eventually(t, 10*time.Second, "an event after the reconnection", func() bool { return c.len() == 1 })
}

// TestNATSReconnectResyncs restarts a NATS server of the test's own: the bus
// reconnects, resynchronizes, and receives events again.
func TestNATSReconnectResyncs(t *testing.T) {
	natsURL(t) // NATS tests run only where NATS is wanted
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Fatalf("nats-server is not installed: %v", err)
	}
	addr := testtools.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", port)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		testtools.EventuallyErr(t, 10*time.Second, "nats-server to listen", func() error {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
			}
			return err
		})
		return cmd
	}
	srv := start()
	b := replicas(t, 1, "nats://"+addr, nil)[0]
	resynced := make(chan struct{}, 4)
	b.OnResync(func(context.Context) { resynced <- struct{}{} })
	c := &collector{}
	b.Subscribe("t", c.add)
	srv.Process.Kill()
	srv.Wait()
	srv = start()
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	select {
	case <-resynced:
	case <-time.After(20 * time.Second):
		t.Fatal("no resync after NATS restarted")
	}
	testtools.EventuallyErr(t, 10*time.Second, "an event after the reconnection", func() error {
		if err := b.Publish(context.Background(), "t", "after"); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
		if c.len() == 0 {
			return fmt.Errorf("no event yet")
		}
		return nil
	})
}

// TestLargeEventsTravelInParts publishes events over PostgreSQL's NOTIFY
// limit (under 8,000 bytes): each reaches the other replica whole, once.
func TestLargeEventsTravelInParts(t *testing.T) {
	st := storetest.OpenTestPostgres(t)
	buses := replicas(t, 2, "", st)
	c := &collector{}
	buses[1].Subscribe("big", c.add)
	want := []string{strings.Repeat("é\"x", 9000), strings.Repeat("y", 7950), "small"}
	for _, w := range want {
		if err := buses[0].Publish(context.Background(), "big", w); err != nil {
			t.Fatal(err)
		}
	}
	testtools.Eventually(t, 10*time.Second, "three events", func() bool { return c.len() >= len(want) })
	time.Sleep(100 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) != len(want) {
		t.Fatalf("%d events, want %d", len(c.got), len(want))
	}
	for i, e := range c.got {
		var got string
		if err := json.Unmarshal(e.Data, &got); err != nil || got != want[i] {
			t.Errorf("event %d: %d bytes (%v), want %d", i, len(got), err, len(want[i]))
		}
	}
}

// TestNATSSubscriptionIsInPlaceWhenReady: a bus on NATS is ready only once
// the server has its subscription (a flush), so that nothing another
// replica publishes after is missed. The flush was given a context with no
// deadline, which NATS refuses at once (ErrNoDeadlineContext): the bus
// logged a warning and was ready before the server had the subscription,
// and under load a replica missed events published right after
// (TestEventsReachEveryReplicaOnce/nats failed 1 run in 5).
func TestNATSSubscriptionIsInPlaceWhenReady(t *testing.T) {
	capture := &logtest.Capture{}
	b, err := events.Open(context.Background(), events.Options{URL: natsURL(t) + "/nexus-test-flush-" + fmt.Sprint(time.Now().UnixNano()),
		Origin: "flush", Logger: slog.New(capture)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	testtools.Eventually(t, 10*time.Second, "the bus to be ready", func() bool { return b.Ready(context.Background()) == nil })
	for _, r := range capture.Records() {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged while subscribing: %s %s", r.Level, r.Message)
		}
	}
}
