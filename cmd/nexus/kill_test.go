package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
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
// and reading over every surface (flat, agents, bounded, flat without a
// session, REST, WebSocket chat), kills one replica with SIGKILL midway and
// starts it again. Every client must
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
	// The chat's model: each turn finds its tools, then answers in chunks.
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		if len(req.LastToolResults()) == 0 {
			return llmtest.Answer{Chunks: []string{"Let me ", "look. "}, Calls: []llmtest.Call{{ID: "c1", Name: "get_tools", Args: `{}`}}, Delay: 5 * time.Millisecond}
		}
		return llmtest.Answer{Chunks: []string{"Every ", "replica ", "answers ", "the same."}, Delay: 5 * time.Millisecond}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	t.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	reps, db := startReplicas(t, 3, "--no-demo", "--events", nats+"/nexus-kill-"+strconv.FormatInt(time.Now().UnixNano(), 36),
		"--token-rate", "0", "--max-sessions", "100000", "--max-turns", "1000", "--ws-max-per-user", "1000")
	front, counts := roundRobin(t, bases(reps))
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Two users besides the local one: one whose conversation is watched
	// through another replica, one whose quota (anonymous: 10 prompts a
	// day) runs out during the run.
	user := func(name, tier string) (token string, tally *chatTally) {
		out, errOut, code := runNexus(t, "", "users", "add", name, "--tier", tier, "--db", db)
		if code != 0 || !strings.Contains(out, "nxs_") {
			t.Fatalf("users add %s: %d %s %s", name, code, out, errOut)
		}
		tally = &chatTally{name: name}
		if err := conn.QueryRow(`SELECT id FROM users WHERE name = $1`, name).Scan(&tally.user); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out[strings.Index(out, "nxs_"):]), tally
	}
	watchToken, watchTally := user("kill-watch", "paid")
	quotaToken, quotaTally := user("kill-quota", "anonymous")
	localTally := &chatTally{name: "local", user: "local"}

	var (
		acked   sync.Map // belief id -> content
		ackedN  atomic.Int64
		calls   atomic.Int64
		retries atomic.Int64
		// reconnects counts MCP clients that connected again after the
		// SDK closed their session.
		reconnects atomic.Int64
		gaveUp     atomic.Int64
		stop       = make(chan struct{})
		wg         sync.WaitGroup
		firstErr   sync.Once
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
		args := map[string]any{"content": content}
		if tool == "substrate" { // the agents surface: one tool per agent, with a mode
			args["mode"], args["sessionId"] = "belief_create", "kill-agents-"+ext
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
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
	var (
		chatMu    sync.Mutex
		chatters  []*chatClient
		quotaUsed = []*chatClient{}
		pinned    *chatClient
	)
	client := func(k int) {
		defer wg.Done()
		surface := []string{"flat", "agents", "bounded", "rest", "exchanges", "chat", "sessionless"}[k%7]
		var cs *mcp.ClientSession
		tool := "belief_create"
		mcpCall := func(call func() (string, error)) func() (string, error) { return call }
		switch surface {
		case "chat":
			c := &chatClient{base: front, tally: localTally}
			if k == 5 {
				// The first chat client opens its WebSocket on the replica
				// that will die, so that one surely dials again.
				c.first = reps[1].base()
				pinned = c
			}
			chatMu.Lock()
			chatters = append(chatters, c)
			chatMu.Unlock()
			c.run(t, fmt.Sprintf("chat client %d", k), stop, 100*time.Millisecond, fail)
			return
		case "flat", "agents", "bounded", "exchanges", "sessionless":
			path := map[string]string{"flat": "/mcp", "agents": "/mcp/agents", "bounded": "/mcp/bounded", "exchanges": "/mcp", "sessionless": "/mcp"}[surface]
			opts := testtools.WithSession()
			if surface == "sessionless" { // the flat surface without a session: protocol 2026-07-28
				opts = testtools.Sessionless()
			}
			if surface == "agents" {
				tool = "substrate"
			}
			if surface == "bounded" {
				tool = "substrate_belief_create"
			}
			// connect opens the client's session (on the bounded surface,
			// discovering belief_create too).
			connect := func() (*mcp.ClientSession, error) {
				c, err := mcp.NewClient(&mcp.Implementation{Name: "kill", Version: "1"}, nil).Connect(context.Background(),
					&mcp.StreamableClientTransport{Endpoint: front + path}, opts)
				if err != nil || surface != "bounded" {
					return c, err
				}
				res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{"tools": map[string]any{"substrate": []string{"belief_create"}}}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%v", res.Content)
				}
				if err != nil {
					c.Close()
					return nil, err
				}
				return c, nil
			}
			if _, ok := retry(surface+" connect", func() (string, error) {
				var err error
				cs, err = connect()
				return "", err
			}); !ok {
				return
			}
			defer func() { cs.Close() }()
			if surface == "sessionless" && cs.ID() != "" {
				fail("the sessionless client got session %s", cs.ID())
				return
			}
			// The SDK's client (v1.8) closes its session for good when a
			// response stream breaks off mid-event (the replica was killed
			// while writing it): it decodes the incomplete event, which the
			// SSE specification says to discard at the end of the stream,
			// fails ("failed to decode event: ... unexpected EOF", seen once
			// in CI), and every later call fails with ErrConnectionClosed. A
			// real client connects again, and so does this one. Otherwise
			// the session survives the kill (the other clients' calls on
			// sessions the dead replica served go on).
			reconnecting := func(call func() (string, error)) func() (string, error) {
				return func() (string, error) {
					id, err := call()
					if errors.Is(err, mcp.ErrConnectionClosed) {
						cs.Close()
						if c, cerr := connect(); cerr == nil {
							cs = c
							reconnects.Add(1)
						}
					}
					return id, err
				}
			}
			mcpCall = reconnecting
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
				_, ok = retry("exchange_add", mcpCall(func() (string, error) {
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
				}))
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
				id, ok = retry(surface+" "+tool, mcpCall(func() (string, error) { return mcpCreate(cs, tool, content, ext) }))
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
	// The watched conversation: its turns run on replica 0 while a
	// WebSocket on replica 2 watches it (the victim is replica 1); the
	// watcher must see every event of every turn once, in order.
	runner := &chatClient{base: reps[0].base(), token: watchToken, tally: watchTally}
	if _, err := runner.turn(context.Background(), "The first question, before the watch"); err != nil || runner.conv == "" {
		t.Fatalf("the watched conversation's first turn: %v", err)
	}
	watcherConn := wsDial(t, reps[2].base(), watchToken)
	watcherConn.SetReadLimit(1 << 20)
	frame, _ := json.Marshal(map[string]any{"type": "watch", "conversation_id": runner.conv})
	if err := watcherConn.Write(context.Background(), websocket.MessageText, frame); err != nil {
		t.Fatal(err)
	}
	// Frames are handled in order: once a bogus one is answered, the
	// watch is in place.
	if ev := wsEvents(t, watcherConn, map[string]any{"type": "bogus"}, "error"); len(ev) != 1 || ev[0]["code"] != "BAD_REQUEST" {
		t.Fatalf("after the watch: %v", ev)
	}
	watched := watch(watcherConn)
	var ran []map[string]any
	runnerDone := make(chan struct{})
	go func() {
		defer close(runnerDone)
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			evs, err := runner.turn(context.Background(), fmt.Sprintf("Watched question %d", n))
			if err != nil {
				fail("the watched conversation's turn %d (on a replica that is not killed): %v", n, err)
				return
			}
			ran = append(ran, evs...)
			if last := evs[len(evs)-1]; last["type"] != "complete" {
				fail("the watched conversation's turn %d: %v", n, last)
				return
			}
			watchTally.completed.Add(1)
		}
	}()
	// Clients whose user's prompt quota runs out during the run.
	for k := range 3 {
		wg.Add(1)
		c := &chatClient{base: front, token: quotaToken, tally: quotaTally}
		quotaUsed = append(quotaUsed, c)
		go func() {
			defer wg.Done()
			c.run(t, fmt.Sprintf("quota client %d", k), stop, 50*time.Millisecond, fail)
		}()
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
	<-runnerDone
	t.Logf("%d clients, %v: %d calls acknowledged (%d writes), %d retries, %d MCP sessions opened again; replica 1 killed at %v and restarted; requests per replica %d/%d/%d",
		clients, time.Since(start).Round(time.Millisecond), calls.Load(), ackedN.Load(), retries.Load(), reconnects.Load(), killedAt.Round(time.Millisecond),
		counts[0].Load(), counts[1].Load(), counts[2].Load())
	if gaveUp.Load() > 0 {
		t.Fatalf("%d clients gave up", gaveUp.Load())
	}

	// Every acknowledged write is in the database.
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

	// Chat: every completed turn stored, every conversation gap-free;
	// quotas exact.
	checkChatStored(t, conn, append(append(chatters, quotaUsed...), runner))
	if pinned != nil && (pinned.drops == 0 || pinned.after == 0) {
		t.Errorf("the chat client on the killed replica lost its connection %d times and had %d turns answered after", pinned.drops, pinned.after)
	}
	checkQuota(t, conn, localTally, 500)
	checkQuota(t, conn, quotaTally, 10)
	watchTally.completed.Add(1) // the first turn, before the watch
	checkQuota(t, conn, watchTally, 500)
	if quotaTally.refused.Load() == 0 {
		t.Errorf("the anonymous user's clients were never refused: the quota was not reached")
	}
	// The watcher on replica 2 saw the same events as the runner on
	// replica 0, while replica 1 died: those of every turn after the first,
	// which completed for the runner before the watch began, but whose last
	// events may reach the watcher still (watchLog.after).
	first := runner.acked[0]
	turns := watchTally.completed.Load() - 1
	testtools.EventuallyErr(t, 10*time.Second, "the watcher to see every turn", func() error {
		if n := watched.completes(first); int64(n) < turns {
			return fmt.Errorf("the watcher saw %d of %d turns complete", n, turns)
		}
		return nil
	})
	watcherConn.CloseNow()
	<-watched.done
	rs, rt := turnShape(ran)
	seen := watched.after(first)
	ws, wt := turnShape(seen)
	if !slices.Equal(rs, ws) || rt != wt {
		t.Errorf("the watcher on replica 2 saw %d events (%d steps, %d bytes of text), the runner on replica 0 %d (%d steps, %d bytes); first difference at step %d",
			len(seen), len(ws), len(wt), len(ran), len(rs), len(rt), firstDiff(rs, ws))
		i := firstDiff(rs, ws)
		t.Logf("from step %d, the runner's: %v\nthe watcher's: %v", i, rs[i:min(i+12, len(rs))], ws[i:min(i+12, len(ws))])
	}
	t.Logf("watched conversation: %d turns, %d events seen alike on the runner's and the watcher's replicas", turns, len(ran))
	if ackedN.Load() < int64(clients) {
		t.Errorf("only %d writes acknowledged for %d clients", ackedN.Load(), clients)
	}
}
