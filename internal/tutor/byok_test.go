package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/secrets"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// The test keys: long enough to be masked, distinctive enough to grep.
const (
	aliceKey = "sk-proj-Zq8xW3vT5nR2kL9mJ4hG7fD1sA6pO0iUyTeRwQbN"
	bobKey   = "sk-ant-api03-Hb7Yt2Kp9Lm4Nq6Rs8Tv1Wx3Zc5Df0GjQ"
)

type byokEnv struct {
	t      *testing.T
	st     *store.Store
	s      *Server
	tw     *trace.Writer
	logs   *logtest.Capture
	spans  *tracetest.InMemoryExporter
	p      *pipeline.Pipeline
	output strings.Builder // every tool result and error, as the caller saw it
}

func newBYOKEnv(t *testing.T, st *store.Store, kr *secrets.Keyring) *byokEnv {
	e := &byokEnv{t: t, st: st, logs: &logtest.Capture{}, spans: tracetest.NewInMemoryExporter()}
	log := slog.New(e.logs)
	reg := registry.New()
	conv := conversation.New(st)
	e.s = New(st, conv, Options{CursorKey: []byte("k"), Logger: log, Keyring: kr})
	if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, e.s.byokTools()...); err != nil {
		t.Fatal(err)
	}
	e.tw = trace.NewWriter(st, log)
	t.Cleanup(e.tw.Close)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(e.spans))
	e.p = pipeline.New(pipeline.Options{Registry: reg, Sessions: conv, Traces: e.tw, Logger: log, Tracer: tp.Tracer("test"),
		Principal: func(ctx context.Context) (principal.Principal, bool) {
			u, ok := ctx.Value(whoKey{}).(principal.Principal)
			return u, ok
		}})
	return e
}

func (e *byokEnv) call(who principal.Principal, tool, args string) (map[string]any, *errs.Error) {
	e.t.Helper()
	ctx := context.WithValue(context.Background(), whoKey{}, who)
	o := e.p.Call(ctx, pipeline.Request{Tool: tool, Args: []byte(args), Surface: "test"})
	body, _ := o.Body()
	e.output.Write(body)
	if o.Err != nil {
		e.output.WriteString(o.Err.Error() + o.Err.Message + o.Err.Field)
	}
	out := map[string]any{}
	if err := json.Unmarshal(body, &out); err != nil {
		e.t.Fatalf("%s: %s", tool, body)
	}
	return out, o.Err
}

func (e *byokEnv) count() int {
	e.t.Helper()
	var n int
	if err := e.st.DB().QueryRow(`SELECT COUNT(*) FROM tn_credentials`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

var (
	alice = principal.Principal{ID: "u-alice", Name: "alice", Tier: "free", Role: principal.Member}
	bob   = principal.Principal{ID: "u-bob", Name: "bob", Tier: "free", Role: principal.Member}
)

// TestBYOK: add, list and delete are the caller's own, on both stores; a
// credential's key opens for its owner only.
func TestBYOK(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newBYOKEnv(t, st, secrets.New())
		a, err := e.call(alice, "tn_user_byok_add", `{"provider":"openai","label":"work","apiKey":"`+aliceKey+`"}`)
		if err != nil || a["baseUrl"] != "https://api.openai.com/v1" || a["maskedKey"] != secrets.Mask(aliceKey) || a["fingerprint"] == "" || a["id"] == "" {
			t.Fatalf("add: %v %v", a, err)
		}
		id := a["id"].(string)
		if _, err := e.call(alice, "tn_user_byok_add", `{"provider":"anthropic","label":"claude","apiKey":"`+bobKey+`"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.call(alice, "tn_user_byok_add", `{"provider":"openai","label":"compat","apiKey":"`+aliceKey+`","baseUrl":"https://93.184.216.34/v1/"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.call(alice, "tn_user_byok_add", `{"provider":"openai","label":"work","apiKey":"`+aliceKey+`"}`); err == nil || err.Code != errs.Conflict {
			t.Fatalf("a second label work: %v", err)
		}
		// Pages, with cursors bound to the user.
		l, err := e.call(alice, "tn_user_byok_list", `{"limit":2}`)
		if err != nil || l["totalCount"] != 3.0 || l["hasMore"] != true || len(l["items"].([]any)) != 2 {
			t.Fatalf("list: %v %v", l, err)
		}
		first := l["items"].([]any)[0].(map[string]any)
		if first["id"] != id || first["provider"] != "openai" || first["label"] != "work" || first["maskedKey"] != secrets.Mask(aliceKey) || first["createdAt"] == nil {
			t.Fatalf("first item: %v", first)
		}
		cur := l["nextCursor"].(string)
		l2, err := e.call(alice, "tn_user_byok_list", `{"limit":2,"cursor":"`+cur+`"}`)
		if err != nil || len(l2["items"].([]any)) != 1 || l2["hasMore"] != false || l2["items"].([]any)[0].(map[string]any)["baseUrl"] != "https://93.184.216.34/v1" {
			t.Fatalf("second page: %v %v", l2, err)
		}
		if _, err := e.call(bob, "tn_user_byok_list", `{"limit":2,"cursor":"`+cur+`"}`); err == nil || err.Code != errs.BadRequest {
			t.Fatalf("alice's cursor for bob: %v", err)
		}
		// The key opens for its owner, and only for its owner.
		key, oerr := e.s.OpenCredentialKey(context.Background(), alice.ID, id)
		if oerr != nil || string(key) != aliceKey {
			t.Fatalf("open: %v", oerr)
		}
		if _, oerr := e.s.OpenCredentialKey(context.Background(), bob.ID, id); errs.CodeOf(oerr) != errs.NotFound {
			t.Fatalf("bob opens alice's key: %v", oerr)
		}
		// Bob sees nothing of alice's and cannot delete hers; the answer is
		// the one for an id that does not exist.
		if l, err := e.call(bob, "tn_user_byok_list", `{}`); err != nil || l["totalCount"] != 0.0 || len(l["items"].([]any)) != 0 {
			t.Fatalf("bob's list: %v %v", l, err)
		}
		_, err = e.call(bob, "tn_user_byok_delete", `{"id":"`+id+`"}`)
		_, none := e.call(bob, "tn_user_byok_delete", `{"id":"01J00000000000000000000000"}`)
		if err == nil || err.Code != errs.NotFound || none == nil || none.Code != errs.NotFound ||
			strings.ReplaceAll(err.Message, id, "X") != strings.ReplaceAll(none.Message, "01J00000000000000000000000", "X") {
			t.Fatalf("bob deletes alice's credential: %v, unknown id: %v", err, none)
		}
		if e.count() != 3 {
			t.Fatal("bob's delete removed something")
		}
		if d, err := e.call(alice, "tn_user_byok_delete", `{"id":"`+id+`"}`); err != nil || d["deleted"] != true {
			t.Fatalf("delete: %v %v", d, err)
		}
		if _, err := e.call(alice, "tn_user_byok_delete", `{"id":"`+id+`"}`); err == nil || err.Code != errs.NotFound {
			t.Fatalf("delete twice: %v", err)
		}
		if l, _ := e.call(alice, "tn_user_byok_list", `{}`); l["totalCount"] != 2.0 {
			t.Fatalf("after delete: %v", l)
		}
		e.noPlainSecret(aliceKey, bobKey)
	})
}

// TestBYOKBadInput: every bad field is a BAD_REQUEST naming it, and nothing
// is written; base URLs aimed at internal addresses are refused.
func TestBYOKBadInput(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newBYOKEnv(t, st, secrets.New())
		add := func(provider, label, key, base string) string {
			m := map[string]string{"provider": provider, "label": label}
			if key != "" {
				m["apiKey"] = key
			}
			if base != "" {
				m["baseUrl"] = base
			}
			b, _ := json.Marshal(m)
			return string(b)
		}
		for _, tc := range []struct{ args, field string }{
			{add("gemini", "x", aliceKey, ""), "provider"},
			{`{"label":"x","apiKey":"` + aliceKey + `"}`, "provider"},
			{add("openai", "", aliceKey, ""), "label"},
			{add("openai", "   ", aliceKey, ""), "label"},
			{add("openai", strings.Repeat("l", 101), aliceKey, ""), "label"},
			{add("openai", "x", "", ""), "apiKey"},
			{add("anthropic", "x", "", ""), "apiKey"},
			{add("openai", "x", "short", ""), "apiKey"},
			{add("openai", "x", "sk-proj-with a space-0123456789", ""), "apiKey"},
			{add("ollama", "x", aliceKey, "https://93.184.216.34"), "apiKey"},
			{add("ollama", "x", "", ""), "baseUrl"},
			{add("openai", "x", aliceKey, "not a url"), "baseUrl"},
			{add("openai", "x", aliceKey, "ftp://93.184.216.34/"), "baseUrl"},
			{add("openai", "x", aliceKey, "http://example.com"), "baseUrl"},
			{add("openai", "x", aliceKey, "http://93.184.216.34/v1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://user:pw@x.example.com"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://93.184.216.34/v1?x=1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://93.184.216.34/v1#frag"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://127.0.0.1/v1"), "baseUrl"},
			{add("openai", "x", aliceKey, "http://127.0.0.1:11434"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://10.0.0.1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://192.168.1.1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://172.16.0.1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://100.64.0.1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://169.254.169.254/latest/meta-data"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://0.0.0.0"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://224.0.0.1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://[::1]/v1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://[::ffff:127.0.0.1]/v1"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://[fe80::1%25eth0]/"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://[fd00::1]/"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://localhost:8443"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://api.localhost"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://2130706433/"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://0x7f.1/"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://93.184.216.34:0/"), "baseUrl"},
			{add("openai", "x", aliceKey, "https://nexus-test-no-such-host.invalid/"), "baseUrl"},
			{`{"id":""}`, "id"},
		} {
			tool := "tn_user_byok_add"
			if strings.HasPrefix(tc.args, `{"id"`) {
				tool = "tn_user_byok_delete"
			}
			if _, err := e.call(alice, tool, tc.args); err == nil || err.Code != errs.BadRequest || !strings.Contains(err.Field+" "+err.Message, tc.field) {
				t.Errorf("%s %s: %v, want BAD_REQUEST naming %s", tool, tc.args, err, tc.field)
			}
		}
		if n := e.count(); n != 0 {
			t.Fatalf("refused input wrote %d credentials", n)
		}
		// Names: resolved, every address checked.
		e.s.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
			switch host {
			case "api.example.com":
				return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
			case "mixed.example.com":
				return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")}, nil
			case "metadata.example.com":
				return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		for _, u := range []string{"https://mixed.example.com", "https://metadata.example.com/", "https://nowhere.example.com"} {
			if _, err := e.call(alice, "tn_user_byok_add", add("openai", "x", aliceKey, u)); err == nil || err.Code != errs.BadRequest || err.Field != "baseUrl" {
				t.Errorf("base URL %s: %v, want BAD_REQUEST naming baseUrl", u, err)
			}
		}
		if n := e.count(); n != 0 {
			t.Fatalf("refused input wrote %d credentials", n)
		}
		if o, err := e.call(alice, "tn_user_byok_add", add("openai", "named", aliceKey, "https://API.example.com:8443/v1")); err != nil || o["baseUrl"] != "https://api.example.com:8443/v1" {
			t.Fatalf("a public name: %v %v", o, err)
		}
		// Loopback over http, for a local Ollama, only when the server allows it.
		e.s.allowLoopback = true
		if o, err := e.call(alice, "tn_user_byok_add", add("ollama", "local", "", "http://127.0.0.1:11434/")); err != nil || o["baseUrl"] != "http://127.0.0.1:11434" || o["maskedKey"] != nil {
			t.Fatalf("ollama on loopback, allowed: %v %v", o, err)
		}
		if _, err := e.call(alice, "tn_user_byok_add", add("ollama", "lan", "", "http://10.0.0.1:11434")); err == nil || err.Field != "baseUrl" {
			t.Fatalf("a private address with loopback allowed: %v", err)
		}
		if n := e.count(); n != 2 {
			t.Fatalf("%d credentials, want 2", n)
		}
		e.noPlainSecret(aliceKey)
	})
}

// TestBYOKNoKeyring: without a keyring the tools say how to configure one.
func TestBYOKNoKeyring(t *testing.T) {
	e := newBYOKEnv(t, storetest.OpenTestSQLite(t), nil)
	for tool, args := range map[string]string{
		"tn_user_byok_add":    `{"provider":"openai","label":"x","apiKey":"` + aliceKey + `"}`,
		"tn_user_byok_list":   `{}`,
		"tn_user_byok_delete": `{"id":"x"}`,
	} {
		if _, err := e.call(alice, tool, args); err == nil || err.Code != errs.Unavailable || !strings.Contains(err.Message, "NEXUS_KEYRING") {
			t.Errorf("%s without a keyring: %v", tool, err)
		}
	}
	e.noPlainSecret(aliceKey)
}

// noPlainSecret fails when any of the secrets (or their middle, which the
// mask never shows) is in a column of any table, a tool result or error, a
// trace record, a span or a log record.
func (e *byokEnv) noPlainSecret(keys ...string) {
	t := e.t
	t.Helper()
	e.tw.Flush()
	var needles []string
	for _, k := range keys {
		needles = append(needles, k, k[8:len(k)-4])
	}
	check := func(where, text string) {
		t.Helper()
		for _, n := range needles {
			if strings.Contains(text, n) {
				t.Errorf("a secret in plain text in %s", where)
			}
		}
	}
	check("tool results", e.output.String())
	ctx := context.Background()
	db := e.st.DB()
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if e.st.Dialect() == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	var tables []string
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	scanned := 0
	for _, table := range tables {
		scanned += e.scanTable(db, table, check)
	}
	if scanned == 0 {
		t.Fatal("no rows scanned")
	}
	var traced int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM traces`).Scan(&traced); err != nil || traced == 0 {
		t.Fatalf("no trace records (%v): the scan proves nothing about traces", err)
	}
	for _, r := range e.logs.Records() {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
		check("the log", b.String())
	}
	spans := e.spans.GetSpans()
	if len(spans) == 0 {
		t.Fatal("no spans recorded")
	}
	for _, s := range spans {
		check("a span", fmt.Sprintf("%s %v %v %v", s.Name, s.Attributes, s.Events, s.Status))
	}
}

func (e *byokEnv) scanTable(db *sql.DB, table string, check func(string, string)) int {
	t := e.t
	t.Helper()
	rows, err := db.Query(`SELECT * FROM "` + table + `"`)
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for i, v := range vals {
			s := fmt.Sprint(v)
			if b, ok := v.([]byte); ok {
				s = string(b)
			}
			check(table+"."+cols[i], s)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	return n
}

// TestModelHTTPClient: the client for model providers refuses internal
// addresses when it connects (whatever the name resolved to when the
// credential was added) and redirects to another host.
func TestModelHTTPClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://localhost:1/", http.StatusFound)
			return
		}
		if r.URL.Path == "/here" {
			http.Redirect(w, r, "/ok", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	s := New(nil, nil, Options{})
	if _, err := s.ModelHTTPClient(5 * time.Second).Get(srv.URL + "/ok"); err == nil || !strings.Contains(err.Error(), "internal") {
		t.Fatalf("loopback, not allowed: %v", err)
	}
	s.allowLoopback = true
	c := s.ModelHTTPClient(5 * time.Second)
	resp, err := c.Get(srv.URL + "/here")
	if err != nil {
		t.Fatalf("loopback, allowed, same-host redirect: %v", err)
	}
	resp.Body.Close()
	if _, err := c.Get(srv.URL + "/away"); err == nil || !strings.Contains(err.Error(), "another host") {
		t.Fatalf("redirect to another host: %v", err)
	}
	if _, err := c.Get("http://10.255.255.1:9/"); err == nil || !strings.Contains(err.Error(), "internal") {
		t.Fatalf("a private address: %v", err)
	}
}

// TestBYOKRotationWhileRunning: after a rotation by another process (nexus
// keys rotate rewrites the keyring file and rewraps the credentials), a
// running server reads the keyring again and its users' keys still open.
func TestBYOKRotationWhileRunning(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		path := filepath.Join(t.TempDir(), "keyring.json")
		running, err := secrets.LoadOrCreate(path)
		if err != nil {
			t.Fatal(err)
		}
		e := newBYOKEnv(t, st, running)
		e.s.reloadKeys = func() (*secrets.Keyring, error) { return secrets.Load(path) }
		a, cerr := e.call(alice, "tn_user_byok_add", `{"provider":"openai","label":"work","apiKey":"`+aliceKey+`"}`)
		if cerr != nil {
			t.Fatal(cerr)
		}
		// Another process rotates.
		other, err := secrets.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // twice: the second rotation rewraps again
			other.Rotate()
			if err := other.Save(path); err != nil {
				t.Fatal(err)
			}
			if n, err := RewrapCredentials(context.Background(), st, other, 1); err != nil || n != 1 {
				t.Fatalf("rewrap: %d %v", n, err)
			}
		}
		if n, err := RewrapCredentials(context.Background(), st, other, 1); err != nil || n != 0 {
			t.Fatalf("rewrap with nothing to do: %d %v", n, err)
		}
		key, err := e.s.OpenCredentialKey(context.Background(), alice.ID, a["id"].(string))
		if err != nil || string(key) != aliceKey {
			t.Fatalf("open after rotation: %v", err)
		}
		if e.s.keys.Load().Current() != 3 {
			t.Fatalf("the running server's keyring is at version %d, want 3", e.s.keys.Load().Current())
		}
		e.noPlainSecret(aliceKey)
	})
}

// BenchmarkRewrapCredentials: the rewrapping of nexus keys rotate over
// 10,000 credentials (issue 10's number), per rotation.
func BenchmarkRewrapCredentials(b *testing.B) {
	for _, d := range []string{"sqlite", "postgres"} {
		b.Run(d, func(b *testing.B) {
			var st *store.Store
			if d == "sqlite" {
				st = storetest.OpenTestSQLite(b)
			} else {
				st = storetest.OpenTestPostgres(b)
			}
			kr := secrets.New()
			const n = 10000
			err := st.Tx(context.Background(), func(tx *sql.Tx) error {
				for i := range n {
					id := fmt.Sprintf("c%05d", i)
					sv, err := kr.Seal([]byte(aliceKey), CredentialAAD("u", id))
					if err != nil {
						return err
					}
					if _, err := tx.Exec(st.Q(`INSERT INTO tn_credentials (id, user_id, provider, label, base_url, sealed, fingerprint, masked, created_at, updated_at)
						VALUES (?, 'u', 'openai', ?, 'https://api.openai.com/v1', ?, '', '', 0, 0)`), id, id, sv.String()); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				kr.Rotate()
				if got, err := RewrapCredentials(context.Background(), st, kr, 500); err != nil || got != n {
					b.Fatalf("rewrapped %d: %v", got, err)
				}
			}
		})
	}
}

// TestBYOKConcurrentLabel: of many adds of one label at once, one wins and
// the others are CONFLICT naming the label.
func TestBYOKConcurrentLabel(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newBYOKEnv(t, st, secrets.New())
		codes := make(chan errs.Code, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ctx := context.WithValue(context.Background(), whoKey{}, alice)
				o := e.p.Call(ctx, pipeline.Request{Tool: "tn_user_byok_add", Surface: "test",
					Args: []byte(`{"provider":"openai","label":"same","apiKey":"` + aliceKey + `"}`)})
				if o.Err != nil {
					if o.Err.Code == errs.Conflict && o.Err.Field != "label" {
						t.Errorf("conflict without the field: %v", o.Err)
					}
					codes <- o.Err.Code
					return
				}
				codes <- ""
			})
		}
		wg.Wait()
		close(codes)
		ok := 0
		for c := range codes {
			switch c {
			case "":
				ok++
			case errs.Conflict:
			default:
				t.Errorf("an add answered %s", c)
			}
		}
		if ok != 1 || e.count() != 1 {
			t.Fatalf("%d adds succeeded, %d rows", ok, e.count())
		}
	})
}

// TestReloadKeyring: told of a rotation (keys.rotated), a server reads the
// keyring file again and seals new credentials under the new version; an
// older file changes nothing, and without a file there is nothing to read.
func TestReloadKeyring(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	path := filepath.Join(t.TempDir(), "keyring.json")
	running, err := secrets.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newBYOKEnv(t, st, running)
	if v, err := e.s.ReloadKeyring(); err != nil || v != 1 {
		t.Fatalf("without a reload function: %d %v, want 1 (nothing read)", v, err)
	}
	e.s.reloadKeys = func() (*secrets.Keyring, error) { return secrets.Load(path) }
	other, err := secrets.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	other.Rotate()
	if err := other.Save(path); err != nil {
		t.Fatal(err)
	}
	if v, err := e.s.ReloadKeyring(); err != nil || v != 2 || e.s.keys.Load().Current() != 2 {
		t.Fatalf("after a rotation: %d %v", v, err)
	}
	if v, err := e.s.ReloadKeyring(); err != nil || v != 2 {
		t.Fatalf("again: %d %v", v, err)
	}
	if err := os.WriteFile(path, []byte("not a keyring"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.ReloadKeyring(); err == nil || e.s.keys.Load().Current() != 2 {
		t.Fatalf("a broken file: %v; the keyring in use must stay", err)
	}
}
