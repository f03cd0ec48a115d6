package bounded_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/livemcpbench"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools/catalog"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// keptCatalog is a catalog of toolboxes none of which is open, whose
// servers' listings are kept (as the workbench keeps them in the store): a
// catalog of thousands of tools without connecting anything.
type keptCatalog struct {
	tbs   []registry.Toolbox
	tools []registry.Tool
}

func (c *keptCatalog) Toolboxes() []registry.Toolbox { return c.tbs }
func (c *keptCatalog) Open(context.Context, string) (*registry.Opened, error) {
	return nil, errs.E(errs.Unavailable, "nothing connects in this test")
}
func (c *keptCatalog) OpenAll(context.Context)    {}
func (c *keptCatalog) Listed() []registry.Tool    { return c.tools }
func (c *keptCatalog) ListingsVersion() uint64    { return 1 }
func (c *keptCatalog) Unlisted() []string         { return nil }
func (c *keptCatalog) size() (servers, tools int) { return len(c.byServer()), len(c.tools) }
func (c *keptCatalog) byServer() map[string]bool {
	m := map[string]bool{}
	for _, t := range c.tools {
		m[t.ID.Toolbox+"/"+t.ID.Server] = true
	}
	return m
}

// keep makes the kept catalog of entries.
func keep(entries []catalog.Entry) *keptCatalog {
	c := &keptCatalog{}
	idx := map[string]int{}
	for _, e := range entries {
		i, ok := idx[e.Toolbox]
		if !ok {
			i = len(c.tbs)
			idx[e.Toolbox] = i
			c.tbs = append(c.tbs, registry.Toolbox{Name: e.Toolbox, Description: e.Category, ServerDescriptions: map[string]string{}})
		}
		c.tbs[i].Servers = append(c.tbs[i].Servers, e.Name)
		c.tbs[i].ServerDescriptions[e.Name] = e.Description
		for _, t := range e.Tools {
			c.tools = append(c.tools, registry.Tool{ID: registry.ID{Toolbox: e.Toolbox, Server: e.Name, Tool: t.Name},
				Description: t.Description, InputSchema: t.InputSchema, Source: registry.MCP, Family: registry.Workbench})
		}
	}
	return c
}

// benchServers are LiveMCPBench's servers: the whole catalog when the
// shared data is there, else the repository's excerpt (two servers).
func benchServers(tb testing.TB) ([]livemcpbench.Server, []livemcpbench.Task, bool) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "livemcpbench")
	if d := os.Getenv("NEXUS_SHARED_DATA"); d != "" {
		dir = filepath.Join(d, "livemcpbench")
	}
	servers, tasks, err := livemcpbench.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		servers, tasks, err = livemcpbench.Load("../livemcpbench/testdata")
		if err != nil {
			tb.Fatal(err)
		}
		return servers, tasks, false
	}
	if err != nil {
		tb.Fatal(err)
	}
	return servers, tasks, true
}

// keptHub is the bounded surface (with its initialize instructions) over a
// kept catalog.
func keptHub(tb testing.TB, c *keptCatalog) (*mcp.ClientSession, *mcp.InitializeResult) {
	tb.Helper()
	reg := registry.New()
	p := pipeline.New(pipeline.Options{Registry: reg})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Instructions: "Nexus, a hub of tools.",
		Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: c}})
	if err != nil {
		tb.Fatal(err)
	}
	cs := connectTB(tb, s.Server())
	return cs, cs.InitializeResult()
}

func connectTB(tb testing.TB, srv *mcp.Server) *mcp.ClientSession {
	tb.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func callText(tb testing.TB, cs *mcp.ClientSession, name string, args any) string {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		tb.Fatalf("%s: %s", name, text)
	}
	return text
}

// TestOverviewWithinBudget: whatever the catalog's size, get_tools'
// overview and the initialize instructions stay within about 2,000 tokens
// (mcpkit.OverviewBudget bytes); a small catalog is listed whole, a large
// one by toolbox, pointing to search_tools, which searches every tool.
func TestOverviewWithinBudget(t *testing.T) {
	servers, _, _ := benchServers(t)
	one := 0
	for _, s := range servers {
		one += len(s.Tools)
	}
	// The catalog, and as many copies as make 5,000 tools.
	for _, copies := range []int{1, (5000 + one - 1) / one} {
		c := keep(catalog.Entries(servers, copies))
		nServers, nTools := c.size()
		cs, init := keptHub(t, c)
		if n := len(init.Instructions); n > mcpkit.OverviewBudget || !strings.Contains(init.Instructions, c.tbs[0].Name) {
			t.Errorf("%d tools: instructions of %d bytes:\n%.300s", nTools, n, init.Instructions)
		}
		text := callText(t, cs, "get_tools", map[string]any{})
		if len(text) > mcpkit.OverviewBudget {
			t.Errorf("%d tools: get_tools overview of %d bytes, over %d", nTools, len(text), mcpkit.OverviewBudget)
		}
		var ov struct {
			Agents []struct {
				Modes []struct{ Name, Description string }
			}
			Toolboxes []struct {
				Name        string
				ServerCount int `json:"server_count"`
				ToolCount   int `json:"tool_count"`
			}
			MoreToolboxes int `json:"more_toolboxes"`
			Usage         string
		}
		if err := json.Unmarshal([]byte(text), &ov); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d servers, %d tools: instructions %d bytes, overview %d bytes, %d agents, %d toolboxes shown, %d more",
			nServers, nTools, len(init.Instructions), len(text), len(ov.Agents), len(ov.Toolboxes), ov.MoreToolboxes)
		if !strings.Contains(ov.Usage, "search_tools") {
			t.Errorf("%d tools: the usage does not point to search_tools: %s", nTools, ov.Usage)
		}
		if nTools >= 5000 && (len(ov.Agents) != 0 || len(ov.Toolboxes) < 2 || ov.Toolboxes[1].ToolCount == 0 || ov.Toolboxes[1].ServerCount == 0) {
			t.Errorf("%d tools: overview %+v", nTools, ov)
		}
		if nTools < 100 && (len(ov.Agents) != nServers || len(ov.Agents[0].Modes) == 0 || ov.Agents[0].Modes[0].Description == "") {
			t.Errorf("%d tools: a small catalog is not listed whole: %s", nTools, text)
		}
		// search_tools searches all of them (the last copy's too).
		last := c.tools[len(c.tools)-1]
		var r searchResult
		if err := json.Unmarshal([]byte(callText(t, cs, "search_tools", map[string]any{"query": last.Description, "limit": 50})), &r); err != nil {
			t.Fatal(err)
		}
		if r.Searched != nTools {
			t.Errorf("searched %d of %d tools", r.Searched, nTools)
		}
		found := false
		for _, h := range r.Tools {
			found = found || h.Tool == last.ID.Tool
		}
		if !found {
			t.Errorf("%d tools: a search by %s's description did not find it: %v", nTools, last.ID.Tool, r.names())
		}
	}
}

// BenchmarkSearchTools is one search_tools call through the bounded
// surface (an SDK client in memory, the pipeline, the index), at 527 tools
// (LiveMCPBench) and at about 5,000 (its renamed copies), lexical. It
// reports p50 and p99 besides ns/op. The index is built before the timer.
//
//	go test ./internal/bounded -run '^$' -bench SearchTools -benchtime 2000x
func BenchmarkSearchTools(b *testing.B) {
	servers, tasks, whole := benchServers(b)
	if !whole {
		b.Log("LiveMCPBench is not in ../shared/data: measuring on the repository's excerpt")
	}
	for _, copies := range []int{1, 10} {
		c := keep(catalog.Entries(servers, copies))
		_, n := c.size()
		b.Run(fmt.Sprintf("%d-tools", n), func(b *testing.B) {
			cs, _ := keptHub(b, c)
			callText(b, cs, "search_tools", map[string]any{"query": "warm up"})
			times := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := tasks[i%len(tasks)].Question
				start := time.Now()
				callText(b, cs, "search_tools", map[string]any{"query": q})
				times = append(times, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkSearchToolsLiveMCPBench scores search_tools, as a client calls
// it, on LiveMCPBench's 95 tasks: Nexus runs against the catalog's 527 real
// tool definitions served by catalog.Handler (70 servers over Streamable
// HTTP, every toolbox opened through the workbench), each task's request is
// the query, its annotated tools the answers. It reports recall@5, @10 and
// @25 and MRR, lexical and hybrid with the fake embedding model (which
// proves the wiring, not the quality: its vectors are hashed words), and
// how long opening the whole catalog took.
//
//	go test ./internal/bounded -run '^$' -bench SearchToolsLiveMCPBench -benchtime 1x
func BenchmarkSearchToolsLiveMCPBench(b *testing.B) {
	servers, tasks, whole := benchServers(b)
	if !whole {
		b.Skip("LiveMCPBench is not in ../shared/data (set NEXUS_SHARED_DATA): nothing to score")
	}
	entries := catalog.Entries(servers, 1)
	url := catalog.Start(b, entries)
	cfg, err := config.Parse("catalog.yaml", catalog.Config(url, entries), nil)
	if err != nil {
		b.Fatal(err)
	}
	fake := embedtest.New(b)
	emb, err := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed", Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	for _, ranking := range []struct {
		name string
		emb  embed.Embedder
	}{{"lexical", nil}, {"hybrid-fake", emb}} {
		b.Run(ranking.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				reg := registry.New()
				m := workbench.NewManager(cfg, reg, workbench.Options{})
				p := pipeline.New(pipeline.Options{Registry: reg})
				s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Embedder: ranking.emb,
					Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}})
				if err != nil {
					b.Fatal(err)
				}
				cs := connectTB(b, s.Server())
				start := time.Now()
				m.OpenAll(context.Background())
				opened := time.Since(start)
				names := map[string]bool{}
				for _, t := range reg.Listed(registry.Tools) {
					names[t.ID.Tool] = true
				}
				var sums [3]float64
				var mrr float64
				scored := 0
				for _, task := range tasks {
					gold, _ := task.Gold(names)
					if len(gold) == 0 {
						continue
					}
					var r searchResult
					if err := json.Unmarshal([]byte(callText(b, cs, "search_tools", map[string]any{"query": task.Question, "limit": 25})), &r); err != nil {
						b.Fatal(err)
					}
					if r.Ranking != strings.Split(ranking.name, "-")[0] {
						b.Fatalf("ranking %q", r.Ranking)
					}
					var ranked []string
					for _, h := range r.Tools {
						ranked = append(ranked, h.Tool)
					}
					for k, cut := range []int{5, 10, 25} {
						sums[k] += livemcpbench.Recall(ranked, gold, cut)
					}
					mrr += livemcpbench.ReciprocalRank(ranked, gold)
					scored++
				}
				m.Close()
				b.ReportMetric(float64(len(names)), "tools")
				b.ReportMetric(sums[0]/float64(scored), "recall@5")
				b.ReportMetric(sums[1]/float64(scored), "recall@10")
				b.ReportMetric(sums[2]/float64(scored), "recall@25")
				b.ReportMetric(mrr/float64(scored), "MRR")
				b.ReportMetric(float64(opened.Milliseconds()), "open-ms")
			}
		})
	}
}
