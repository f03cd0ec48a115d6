package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// killLoad says how hard TestKillOneReplicaUnderLoad pushes: the short
// form runs in the test command; NEXUS_TEST_KILL_CLIENTS and
// NEXUS_TEST_KILL_SECONDS give the long form (docs/benchmarks.md).
func killLoad() (clients int, run time.Duration) {
	clients, run = 24, 8*time.Second
	if n, err := strconv.Atoi(os.Getenv("NEXUS_TEST_KILL_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	if n, err := strconv.Atoi(os.Getenv("NEXUS_TEST_KILL_SECONDS")); err == nil && n > 0 {
		run = time.Duration(n) * time.Second
	}
	return clients, run
}

// TestKillOneReplicaUnderLoad runs three replicas on one PostgreSQL database
// and one NATS server behind a round-robin balancer, with clients writing
// and reading over the flat and bounded MCP surfaces and REST, kills one
// replica with SIGKILL midway and starts it again. Every client must
// finish (a call in flight on the killed replica may fail and is retried,
// on the same MCP session: no client initializes again), and every write
// a client saw acknowledged must be in the database.
func TestKillOneReplicaUnderLoad(t *testing.T) {
	nats := os.Getenv("NEXUS_TEST_NATS_URL")
	if nats == "" && os.Getenv("CI") != "" {
		t.Fatal("NEXUS_TEST_NATS_URL is not set; in CI the NATS tests must run (scripts/test sets it)")
	}
	if nats == "" {
		t.Skip("NEXUS_TEST_NATS_URL is not set; skipped (CI sets it)")
	}
	clients, run := killLoad()
	reps, db := startReplicas(t, 3, "--no-demo", "--events", nats+"/nexus-kill-"+strconv.FormatInt(time.Now().UnixNano(), 36),
		"--token-rate", "0", "--max-sessions", "100000")
	front, counts := roundRobin(t, bases(reps))

	var (
		acked    sync.Map // belief id -> content
		ackedN   atomic.Int64
		calls    atomic.Int64
		retries  atomic.Int64
		gaveUp   atomic.Int64
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		firstErr sync.Once
	)
	fail := func(format string, args ...any) {
		gaveUp.Add(1)
		firstErr.Do(func() { t.Errorf(format, args...) })
	}
	// retry runs one call until it succeeds, as a client whose request was
	// in flight on a replica that died does; it gives up after 10 s.
	retry := func(what string, call func() (string, error)) (string, bool) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			id, err := call()
			if err == nil {
				calls.Add(1)
				return id, true
			}
			if time.Now().After(deadline) {
				fail("%s: still failing after 10 s: %v", what, err)
				return "", false
			}
			retries.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}
	created := func(m map[string]any) (string, error) {
		b, _ := m["belief"].(map[string]any)
		id, _ := b["id"].(string)
		if id == "" {
			return "", fmt.Errorf("no belief id in %v", m)
		}
		return id, nil
	}
	mcpCreate := func(cs *mcp.ClientSession, tool, content, ext string) (string, error) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"content": content}})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("tool error: %v", res.Content)
		}
		m, _ := res.StructuredContent.(map[string]any)
		return created(m)
	}
	rest := func(tool string, args map[string]any) (map[string]any, error) {
		body, _ := json.Marshal(args)
		resp, err := http.Post(front+"/api/tools/"+tool+":call", "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", resp.Status, b)
		}
		var m map[string]any
		return m, json.Unmarshal(b, &m)
	}
	// One conversation that a quarter of the clients append to at once,
	// through every replica: its exchange sequence must come out gap-free.
	var conversation string
	if _, ok := retry("session_start", func() (string, error) {
		m, err := rest("session_start", map[string]any{"platform": "api"})
		if err != nil {
			return "", err
		}
		sess, _ := m["session"].(map[string]any)
		conversation, _ = sess["id"].(string)
		if conversation == "" {
			return "", fmt.Errorf("no session id in %v", m)
		}
		return conversation, nil
	}); !ok {
		t.FailNow()
	}
	var exchanges sync.Map // exchange id -> seq, acknowledged
	client := func(k int) {
		defer wg.Done()
		surface := []string{"flat", "bounded", "rest", "exchanges"}[k%4]
		var cs *mcp.ClientSession
		tool := "belief_create"
		switch surface {
		case "flat", "bounded", "exchanges":
			path := map[string]string{"flat": "/mcp", "bounded": "/mcp/bounded", "exchanges": "/mcp"}[surface]
			var err error
			if _, ok := retry(surface+" connect", func() (string, error) {
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "kill", Version: "1"}, nil).Connect(context.Background(),
					&mcp.StreamableClientTransport{Endpoint: front + path}, nil)
				return "", err
			}); !ok {
				return
			}
			defer cs.Close()
			if surface == "bounded" {
				tool = "substrate_belief_create"
				if _, ok := retry("get_tools", func() (string, error) {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{"tools": map[string]any{"substrate": []string{"belief_create"}}}})
					if err == nil && res.IsError {
						err = fmt.Errorf("%v", res.Content)
					}
					return "", err
				}); !ok {
					return
				}
			}
		}
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			content := fmt.Sprintf("Client %d (%s) wrote note %d while a replica may die", k, surface, n)
			ext := fmt.Sprintf("kill-%d-%d", k, n)
			var id string
			var ok bool
			if surface == "exchanges" {
				_, ok = retry("exchange_add", func() (string, error) {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "exchange_add",
						Arguments: map[string]any{"session_id": conversation, "role": "user", "content": content}})
					if err != nil {
						return "", err
					}
					if res.IsError {
						return "", fmt.Errorf("tool error: %v", res.Content)
					}
					m, _ := res.StructuredContent.(map[string]any)
					ex, _ := m["exchange"].(map[string]any)
					id, _ := ex["id"].(string)
					seq, _ := ex["seq"].(float64)
					if id == "" || seq < 1 {
						return "", fmt.Errorf("no exchange in %v", m)
					}
					exchanges.Store(id, int(seq))
					return id, nil
				})
				if !ok {
					return
				}
				continue
			}
			if surface == "rest" {
				id, ok = retry("REST belief_create", func() (string, error) {
					body, _ := json.Marshal(map[string]any{"content": content})
					resp, err := http.Post(front+"/api/tools/belief_create:call", "application/json", bytes.NewReader(body))
					if err != nil {
						return "", err
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != http.StatusOK {
						return "", fmt.Errorf("%s: %s", resp.Status, b)
					}
					var m map[string]any
					if err := json.Unmarshal(b, &m); err != nil {
						return "", err
					}
					return created(m)
				})
			} else {
				id, ok = retry(surface+" "+tool, func() (string, error) { return mcpCreate(cs, tool, content, ext) })
			}
			if !ok {
				return
			}
			if prev, dup := acked.LoadOrStore(id, ext); dup && prev != ext {
				t.Errorf("belief %s acknowledged for %s and %s", id, prev, ext)
			}
			ackedN.Add(1)
		}
	}
	start := time.Now()
	for k := range clients {
		wg.Add(1)
		go client(k)
	}
	time.Sleep(run / 2)
	victim := reps[1]
	victim.kill()
	killedAt := time.Since(start)
	time.Sleep(time.Second)
	victim.start()
	testtools.EventuallyErr(t, 30*time.Second, "the restarted replica to be ready", func() error { return ready(victim.base()) })
	time.Sleep(run - time.Since(start))
	close(stop)
	wg.Wait()
	t.Logf("%d clients, %v: %d calls acknowledged (%d writes), %d retries; replica 1 killed at %v and restarted; requests per replica %d/%d/%d",
		clients, time.Since(start).Round(time.Millisecond), calls.Load(), ackedN.Load(), retries.Load(), killedAt.Round(time.Millisecond),
		counts[0].Load(), counts[1].Load(), counts[2].Load())
	if gaveUp.Load() > 0 {
		t.Fatalf("%d clients gave up", gaveUp.Load())
	}

	// Every acknowledged write is in the database.
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stored := map[string]bool{}
	rows, err := conn.Query(`SELECT id FROM beliefs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		stored[id] = true
	}
	rows.Close()
	lost := 0
	acked.Range(func(k, _ any) bool {
		if !stored[k.(string)] {
			lost++
		}
		return true
	})
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes are not in the database", lost, ackedN.Load())
	}
	// The conversation's exchanges: sequence numbers 1..n with no gap and
	// no repeat, every acknowledged one among them with its number.
	seqs := map[int]string{}
	for offset := 0; ; offset += 500 {
		m, err := rest("exchange_list", map[string]any{"session_id": conversation, "limit": 500, "offset": offset})
		if err != nil {
			t.Fatal(err)
		}
		list, _ := m["exchanges"].([]any)
		for _, e := range list {
			ex := e.(map[string]any)
			seq := int(ex["seq"].(float64))
			if prev, dup := seqs[seq]; dup {
				t.Errorf("exchange seq %d twice (%s, %s)", seq, prev, ex["id"])
			}
			seqs[seq] = ex["id"].(string)
		}
		if len(list) < 500 {
			break
		}
	}
	for i := 1; i <= len(seqs); i++ {
		if _, ok := seqs[i]; !ok {
			t.Errorf("the conversation's %d exchanges have a gap at seq %d", len(seqs), i)
			break
		}
	}
	nex := 0
	exchanges.Range(func(k, v any) bool {
		nex++
		if seqs[v.(int)] != k.(string) {
			t.Errorf("acknowledged exchange %s (seq %d) is not stored as such", k, v)
		}
		return true
	})
	t.Logf("one conversation: %d exchanges acknowledged, %d stored, seq 1..%d gap-free", nex, len(seqs), len(seqs))
	if ackedN.Load() < int64(clients) {
		t.Errorf("only %d writes acknowledged for %d clients", ackedN.Load(), clients)
	}
}
