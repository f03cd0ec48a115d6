package bounded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
	"github.com/nexus-mcp/nexus/internal/livemcpbench"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/testtools/catalog"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// searchResult is search_tools' result as a client reads it.
type searchResult struct {
	Tools []struct {
		Name, Description, Params, Toolbox, Server, Tool, Source string
		Score                                                    float64
	}
	Searched  int
	Ranking   string
	Unindexed []string
	Usage     string
}

func (r searchResult) names() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// catalogConfig serves the LiveMCPBench excerpt (two servers: bing-cn-mcp in
// toolbox discovery, yahoo-finance in toolbox finance) and returns Nexus's
// configuration of it.
func catalogConfig(t *testing.T) *config.Config {
	t.Helper()
	servers, _, err := livemcpbench.Load("../livemcpbench/testdata")
	if err != nil {
		t.Fatal(err)
	}
	entries := catalog.Entries(servers, 1)
	url := catalog.Start(t, entries)
	cfg, err := config.Parse("catalog.yaml", catalog.Config(url, entries), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// searchHub is the bounded surface over cfg's toolboxes, keeping listings in
// st, searching with emb (nil: lexically).
func searchHub(t *testing.T, cfg *config.Config, st *store.Store, emb embed.Embedder) *mcp.ClientSession {
	t.Helper()
	reg := registry.New()
	m := workbench.NewManager(cfg, reg, workbench.Options{Store: st, ListingsCheck: 50 * time.Millisecond})
	m.Start(context.Background())
	t.Cleanup(func() { m.Close() })
	p := pipeline.New(pipeline.Options{Registry: reg})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Embedder: emb,
		Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}})
	if err != nil {
		t.Fatal(err)
	}
	return connectInMemory(t, s.Server())
}

func search(t *testing.T, cs *mcp.ClientSession, args map[string]any) searchResult {
	t.Helper()
	res, text := callTool(t, cs, "search_tools", args)
	if res.IsError {
		t.Fatalf("search_tools %v: %s", args, text)
	}
	var out searchResult
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("search_tools %v: %v in %s", args, err, text)
	}
	return out
}

// TestSearchTools: search_tools ranks the tools of the toolboxes opened and
// of those a server listed before (kept in the store: another process finds
// them without opening anything), names each hit so that it is callable at
// once, says when nothing fits and which toolboxes it cannot search yet,
// and searches one toolbox when asked.
func TestSearchTools(t *testing.T) {
	storetest.ForEachDialect(t, testSearchTools)
}

func testSearchTools(t *testing.T, st *store.Store) {
	cfg := catalogConfig(t)
	cs := searchHub(t, cfg, st, nil)
	// Another replica, started now, on the same store.
	replica := searchHub(t, cfg, st, nil)
	search(t, replica, map[string]any{"query": "stock"})

	// Nothing listed yet: nothing to find, and it says why.
	r := search(t, cs, map[string]any{"query": "current stock price of a company"})
	if len(r.Tools) != 0 || !slices.Equal(r.Unindexed, []string{"discovery", "finance"}) || !strings.Contains(r.Usage, "open_toolbox") {
		t.Fatalf("before any listing: %+v", r)
	}

	if res, text := callTool(t, cs, "open_toolbox", map[string]any{"toolbox": "finance"}); res.IsError {
		t.Fatal(text)
	}
	r = search(t, cs, map[string]any{"query": "current stock price of a company"})
	if len(r.Tools) == 0 || r.Tools[0].Name != "yahoo-finance_get_current_stock_price" {
		t.Fatalf("hits %v, want yahoo-finance_get_current_stock_price first", r.names())
	}
	hit := r.Tools[0]
	if hit.Toolbox != "finance" || hit.Server != "yahoo-finance" || hit.Tool != "get_current_stock_price" || hit.Source != "mcp" ||
		hit.Score <= 0 || hit.Description == "" || strings.Contains(hit.Description, "\n") || !strings.Contains(hit.Params, "*") {
		t.Errorf("hit %+v", hit)
	}
	if r.Ranking != "lexical" || !slices.Equal(r.Unindexed, []string{"discovery"}) || r.Searched != 3 {
		t.Errorf("ranking %q, unindexed %v, searched %d", r.Ranking, r.Unindexed, r.Searched)
	}
	// The hit is callable by its name at once, without get_tools, and is
	// not added to the session's tools/list (get_tools adds what it is
	// asked for).
	res, text := callTool(t, cs, hit.Name, map[string]any{"symbol": "AAPL"})
	if res.IsError || !strings.Contains(text, "get_current_stock_price") || !strings.Contains(text, "AAPL") {
		t.Fatalf("calling the hit: %s", text)
	}
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lt.Tools) != 4 {
		t.Fatalf("tools/list after a search: %v %v", err, lt)
	}

	// Nothing fits: no hits, and it says so.
	r = search(t, cs, map[string]any{"query": "knit a woollen scarf"})
	if len(r.Tools) != 0 || !strings.Contains(r.Usage, "No tool fits") {
		t.Errorf("a query nothing fits: %+v", r)
	}
	// One toolbox.
	if r = search(t, cs, map[string]any{"query": "stock price", "toolbox": "discovery"}); len(r.Tools) != 0 {
		t.Errorf("toolbox discovery: %v", r.names())
	}
	if r = search(t, cs, map[string]any{"query": "stock price", "toolbox": "finance", "limit": 1}); len(r.Tools) != 1 {
		t.Errorf("toolbox finance, limit 1: %v", r.names())
	}
	res, text = callTool(t, cs, "search_tools", map[string]any{"query": "stock", "toolbox": "nope"})
	if !res.IsError || !strings.Contains(text, "Toolbox 'nope' not found") {
		t.Errorf("an unknown toolbox: %s", text)
	}
	for _, bad := range []map[string]any{{"query": ""}, {"query": "  "}, {}, {"query": "x", "limit": 0}, {"query": "x", "limit": 51}, {"query": "x", "other": 1}} {
		if res, text := callTool(t, cs, "search_tools", bad); !res.IsError {
			t.Errorf("search_tools %v: not an error: %s", bad, text)
		}
	}

	// The other replica takes in the listing the first kept (it looks
	// again every ListingsCheck).
	testtools.EventuallyErr(t, 10*time.Second, "the other replica to search the finance listing", func() error {
		if r := search(t, replica, map[string]any{"query": "stock price on a date"}); len(r.Tools) == 0 || r.Tools[0].Toolbox != "finance" {
			return fmt.Errorf("hits %v, unindexed %v", r.names(), r.Unindexed)
		}
		return nil
	})

	// Another process on the same store: the finance listing is kept, so
	// its tools are found before anything is opened, and a hit's name
	// opens its toolbox when called.
	cs2 := searchHub(t, cfg, st, nil)
	r = search(t, cs2, map[string]any{"query": "stock price on a date"})
	if len(r.Tools) == 0 || r.Tools[0].Name != "yahoo-finance_get_stock_price_by_date" || !slices.Equal(r.Unindexed, []string{"discovery"}) {
		t.Fatalf("from the kept listing: %v, unindexed %v", r.names(), r.Unindexed)
	}
	res, text = callTool(t, cs2, r.Tools[0].Name, map[string]any{"symbol": "AAPL", "date": "2025-01-02"})
	if res.IsError || !strings.Contains(text, "get_stock_price_by_date") {
		t.Fatalf("calling a hit of a toolbox not opened: %s", text)
	}
}

// TestSearchToolsListingOfAnotherConfiguration: a server whose
// configuration changed is not searched by the tools it listed before.
func TestSearchToolsListingOfAnotherConfiguration(t *testing.T) {
	cfg := catalogConfig(t)
	st := storetest.OpenTestSQLite(t)
	cs := searchHub(t, cfg, st, nil)
	if res, text := callTool(t, cs, "open_toolbox", map[string]any{"toolbox": "finance"}); res.IsError {
		t.Fatal(text)
	}
	srv := cfg.Toolboxes["finance"].Servers["yahoo-finance"]
	srv.URL += "?v=2"
	cs2 := searchHub(t, cfg, st, nil)
	if r := search(t, cs2, map[string]any{"query": "current stock price"}); len(r.Tools) != 0 || !slices.Contains(r.Unindexed, "finance") {
		t.Fatalf("a listing of the server's former configuration was searched: %v, unindexed %v", r.names(), r.Unindexed)
	}
}

// TestSearchToolsHybrid: with an embedding model, search_tools fuses the
// lexical ranking with the tools' vectors (embedded once), and falls back
// to lexical, saying so, when the model fails. The fake model proves the
// wiring, not the quality.
func TestSearchToolsHybrid(t *testing.T) {
	cfg := catalogConfig(t)
	fake := embedtest.New(t)
	emb, err := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed", Batch: 16,
		Backoff: time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cs := searchHub(t, cfg, nil, emb)
	for _, tb := range []string{"finance", "discovery"} {
		if res, text := callTool(t, cs, "open_toolbox", map[string]any{"toolbox": tb}); res.IsError {
			t.Fatal(text)
		}
	}
	r := search(t, cs, map[string]any{"query": "current stock price of a company"})
	if r.Ranking != "hybrid" || len(r.Tools) == 0 || r.Tools[0].Name != "yahoo-finance_get_current_stock_price" || r.Tools[0].Score > 1 {
		t.Fatalf("hybrid: %q %v", r.Ranking, r.Tools)
	}
	_, texts := fake.Requests()
	if texts != 5+1 {
		t.Errorf("the fake model embedded %d texts, want the 5 tools and the query", texts)
	}
	search(t, cs, map[string]any{"query": "fetch a web page"})
	if _, again := fake.Requests(); again != texts+1 {
		t.Errorf("a second search embedded %d texts, want the query only", again-texts)
	}
	fake.Down(http.StatusServiceUnavailable)
	r = search(t, cs, map[string]any{"query": "current stock price of a company"})
	if r.Ranking != "lexical" || len(r.Tools) == 0 || r.Tools[0].Name != "yahoo-finance_get_current_stock_price" {
		t.Fatalf("the model down: %q %v", r.Ranking, r.names())
	}
}
