package flat_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nexus-mcp/nexus/internal/access"
	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/oauth"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/trace"
	"github.com/nexus-mcp/nexus/internal/users"
)

// benchClients is the number of concurrent client sessions in the overhead
// benchmarks (the "8 concurrent clients").
const benchClients = 8

// echoArgs is the input and the output of the trivial echo tool.
type echoArgs struct {
	Text string `json:"text"`
}

// echoSchema is the echo tool's input schema as Nexus registers it; it is
// what the SDK infers from echoArgs for the bare server.
const echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`

// BenchmarkOverheadBare measures the echo tool on a bare SDK server over
// Streamable HTTP: the baseline of BenchmarkOverheadNexus.
func BenchmarkOverheadBare(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "bench"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoArgs, error) {
			return nil, echoArgs{Text: in.Text}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(ts.Close)
	benchEcho(b, ts.URL, nil)
}

// BenchmarkOverheadBareRaw is BenchmarkOverheadBare with the low-level
// [mcp.Server.AddTool]: the handler decodes and encodes by hand and nothing
// is validated, neither input nor output. It is the cheapest possible SDK
// server, a stricter baseline than the typed tool of BenchmarkOverheadBare
// (which validates input and output against schemas, as Nexus validates
// input).
func BenchmarkOverheadBareRaw(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare-raw", Version: "bench"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text.", InputSchema: json.RawMessage(echoSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in echoArgs
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			out, err := json.Marshal(echoArgs{Text: in.Text})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(out)}},
				StructuredContent: json.RawMessage(out),
			}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(ts.Close)
	benchEcho(b, ts.URL, nil)
}

// BenchmarkOverheadNexus measures the same echo tool served by Nexus: the
// registry, the full pipeline (validation, context resolution, tracing into a
// real SQLite store) and the HTTP guard, over Streamable HTTP. The trace
// backlog is flushed inside the timed region so tracing is fully paid for.
func BenchmarkOverheadNexus(b *testing.B) {
	ts, st, tw := nexusBenchServer(b, nil)

	var before int64
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&before); err != nil {
		b.Fatal(err)
	}
	benchEcho(b, ts.URL, tw.Flush)

	var after int64
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&after); err != nil {
		b.Fatal(err)
	}
	// Each session made one untimed warm-up call besides the b.N timed ones.
	if got, want := after-before, int64(b.N+benchClients); got != want || tw.Dropped() != 0 {
		b.Errorf("traced %d calls (dropped %d), want %d", got, tw.Dropped(), want)
	}
}

// BenchmarkOverheadNexusSessionless is BenchmarkOverheadNexus with
// sessionless clients (protocol 2026-07-28), whose calls the front's fast
// path serves as it serves a session's (before issue 25 the SDK's
// stateless handler served each on a session made for it alone).
func BenchmarkOverheadNexusSessionless(b *testing.B) {
	ts, _, tw := nexusBenchServer(b, nil)
	benchEchoWith(b, ts.URL, tw.Flush, "", testtools.Sessionless())
}

// BenchmarkOverheadNexusAuth is BenchmarkOverheadNexus with every request
// carrying a user's bearer token, authenticated against the store (issue
// 10: authentication must add at most 5%).
func BenchmarkOverheadNexusAuth(b *testing.B) {
	var token string
	ts, _, tw := nexusBenchServerAuth(b, nil, func(st *store.Store) httpapi.Authenticator {
		u := users.New(st)
		_, t, err := u.Add(context.Background(), "bench", users.Free, principal.Member, "")
		if err != nil {
			b.Fatal(err)
		}
		token = t
		return u
	})
	benchEchoAs(b, ts.URL, tw.Flush, token)
}

// benchEcho connects benchClients sessions to the Streamable HTTP endpoint at
// url, then has them make b.N echo calls between them, each session on its
// own goroutine, checking every result. drain, if not nil, runs inside the
// timed region after the last call (to flush asynchronous work). It reports
// throughput in calls/s, the p50 and p99 call latency in µs and, on Linux,
// the process's CPU time per call in µs (client and server together), which
// is much less sensitive than throughput to other load on a shared machine.
func benchEcho(b *testing.B, url string, drain func()) { benchEchoAs(b, url, drain, "") }

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// benchEchoAs is benchEcho with every request carrying token (none when
// empty).
func benchEchoAs(b *testing.B, url string, drain func(), token string) {
	b.Helper()
	benchEchoWith(b, url, drain, token, testtools.WithSession())
}

// benchEchoWith is benchEchoAs with the clients connecting with opts (a
// session, or sessionless: testtools.Sessionless).
func benchEchoWith(b *testing.B, url string, drain func(), token string, opts *mcp.ClientSessionOptions) {
	b.Helper()
	ctx := context.Background()
	// The default transport keeps only 2 idle connections per host, which
	// would make 8 clients reconnect constantly; keep enough for all of them
	// (a POST in flight and the standalone SSE GET per session).
	var rt http.RoundTripper = &http.Transport{MaxIdleConns: 4 * benchClients, MaxIdleConnsPerHost: 4 * benchClients}
	if token != "" {
		rt = bearer{token: token, next: rt}
	}
	hc := &http.Client{Transport: rt}
	b.Cleanup(hc.CloseIdleConnections)

	sessions := make([]*mcp.ClientSession, benchClients)
	for i := range sessions {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, opts)
		if err != nil {
			b.Fatalf("connect session %d: %v", i, err)
		}
		b.Cleanup(func() { cs.Close() }) // before the server closes: cleanups run last-in first-out
		if err := callEcho(ctx, cs, "warm-up"); err != nil {
			b.Fatalf("warm-up call: %v", err)
		}
		sessions[i] = cs
	}

	var next atomic.Int64
	lats := make([][]time.Duration, benchClients)
	var wg sync.WaitGroup
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	start := time.Now()
	for i, cs := range sessions {
		lat := make([]time.Duration, 0, b.N/benchClients+1)
		wg.Go(func() {
			defer func() { lats[i] = lat }()
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				t0 := time.Now()
				err := callEcho(ctx, cs, strconv.FormatInt(n, 10))
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Errorf("session %d, call %d: %v", i, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if drain != nil {
		drain()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu1, _ := processCPU()

	all := slices.Concat(lats...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(micros(testtools.Percentile(all, 50)), "p50-us")
	b.ReportMetric(micros(testtools.Percentile(all, 99)), "p99-us")
	if cpuOK {
		b.ReportMetric(micros(cpu1-cpu0)/float64(b.N), "cpu-us/op")
	}
}

// processCPU returns the user plus system CPU time of this process so far,
// read from /proc/self/stat (Linux only; ok is false elsewhere). Its
// resolution is a clock tick (10 ms), fine for runs of seconds.
func processCPU() (d time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the parenthesized command name start at field 3 (state);
	// utime and stime are fields 14 and 15, in ticks of 1/100 s (USER_HZ).
	// The name may itself contain ") ", hence the last one.
	i := strings.LastIndex(string(b), ") ")
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// callEcho calls the echo tool with text and checks that the result is a
// success echoing it back as structured content.
func callEcho(ctx context.Context, cs *mcp.ClientSession, text string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: echoArgs{Text: text}})
	if err != nil {
		return err
	}
	if res.IsError {
		return &echoError{res: res}
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["text"] != text {
		return &echoError{res: res}
	}
	return nil
}

// echoError reports an echo result that is an error or does not echo.
type echoError struct{ res *mcp.CallToolResult }

func (e *echoError) Error() string {
	b, _ := json.Marshal(e.res)
	return "unexpected echo result: " + string(b)
}

// micros converts d to microseconds.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// nexusBenchServer serves the echo tool through Nexus as serve does: the
// registry, the full pipeline with sessions and tracing into a real SQLite
// store, the flat surface and the HTTP front. withMetrics (may be nil) gives
// the pipeline's observer and the GET /metrics handler for the store.
func nexusBenchServer(b *testing.B, withMetrics func(*store.Store) (pipeline.Observer, func(func() int, int) http.Handler)) (*httptest.Server, *store.Store, *trace.Writer) {
	b.Helper()
	return nexusBenchServerAuth(b, withMetrics, nil)
}

// nexusBenchServerAuth is nexusBenchServer authenticating requests with
// auth (made from the bench's store), when not nil.
func nexusBenchServerAuth(b *testing.B, withMetrics func(*store.Store) (pipeline.Observer, func(func() int, int) http.Handler),
	auth func(*store.Store) httpapi.Authenticator) (*httptest.Server, *store.Store, *trace.Writer) {
	b.Helper()
	reg := registry.New()
	err := reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "bench", Tool: "echo"},
		Description: "Echo the text.",
		InputSchema: json.RawMessage(echoSchema),
		Source:      registry.Local,
		Family:      registry.Valence,
		Handler: registry.Bind(func(_ context.Context, _ *registry.Call, in echoArgs) (any, error) {
			return echoArgs{Text: in.Text}, nil
		}),
	})
	if err != nil {
		b.Fatal(err)
	}
	st := storetest.OpenTestSQLite(b)
	tw := trace.NewWriter(st, slog.New(slog.DiscardHandler))
	b.Cleanup(tw.Close) // runs before the store closes
	var observer pipeline.Observer
	var metrics func(func() int, int) http.Handler
	if withMetrics != nil {
		observer, metrics = withMetrics(st)
	}
	// Sessions as in the real app: each client session gets a conversation.
	po := pipeline.Options{Registry: reg, Traces: tw, Sessions: conversation.New(st), Observer: observer}
	if auth != nil {
		// Authorization as in the real app: the caller is the token's user,
		// a member whose workspace and tools are checked on every call
		// (under access rules that apply to the tool).
		po.Principal = func(ctx context.Context) (principal.Principal, bool) {
			u, ok := users.FromContext(ctx)
			if !ok {
				return principal.Principal{}, false
			}
			return principal.Principal{ID: u.ID, Name: u.Name, Tier: u.Tier, Role: u.Role}, true
		}
		po.Authorizer = access.New(st, config.Access{
			Toolboxes: map[string]config.Rule{registry.BuiltinToolbox: {Roles: []string{principal.Admin, principal.Member}}},
			Tools:     []config.ToolRule{{Pattern: "ech*", Rule: config.Rule{Roles: []string{principal.Member}}}, {Pattern: "tn_user_byok_*", Rule: config.Rule{Roles: []string{principal.Admin}}}},
		})
	}
	p := pipeline.New(po)
	// As "nexus serve" serves /mcp: tools/call by the HTTP front
	// (httpapi's fast path), everything else by the SDK.
	calls := &mcpkit.Calls{}
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "bench", Surface: "mcp-http", Calls: calls}))
	o := httpapi.Options{MCP: srv, MCPCalls: calls.Of(srv), Loopback: true, Metrics: metrics}
	if auth != nil {
		o.Auth = auth(st)
	}
	ts := httptest.NewServer(httpapi.Handler(o))
	b.Cleanup(ts.Close)
	return ts, st, tw
}

// BenchmarkOverheadNexusJWT is BenchmarkOverheadNexusAuth with an identity
// provider's JWT access token instead of an API token: verified once against
// the provider's keys (an in-test issuer), then trusted from the cache, never
// fetching the keys per request.
func BenchmarkOverheadNexusJWT(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	var fetches atomic.Int32
	var iss *httptest.Server
	iss = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks"})
		case "/jwks":
			fetches.Add(1)
			json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Use: "sig"}}})
		}
	}))
	b.Cleanup(iss.Close)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	token, _ := jwt.Signed(signer).Claims(map[string]any{"iss": iss.URL, "aud": "https://nexus.test/mcp", "sub": "bench",
		"exp": time.Now().Add(time.Hour).Unix()}).Serialize()
	ts, _, tw := nexusBenchServerAuth(b, nil, func(st *store.Store) httpapi.Authenticator {
		u := users.New(st)
		v, err := oauth.New(oauth.Config{Issuer: iss.URL, Audience: "https://nexus.test/mcp"}, u)
		if err != nil {
			b.Fatal(err)
		}
		return oauth.Either{Tokens: u, JWT: v}
	})
	benchEchoAs(b, ts.URL, tw.Flush, token)
	if n := fetches.Load(); n != 1 {
		b.Errorf("the keys were fetched %d times, want 1", n)
	}
}
