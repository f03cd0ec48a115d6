package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/livemcpbench"
	"github.com/nexus-mcp/nexus/internal/testtools/catalog"
)

// searchHits are search_tools' hits as a client reads them.
type searchHits struct {
	Tools []struct {
		Name, Flat, Toolbox, Tool string
	}
	Unindexed []string
}

func parseHits(t *testing.T, body string) searchHits {
	t.Helper()
	var h searchHits
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("search_tools: %v in %s", err, body)
	}
	return h
}

// TestSearchToolsEndToEnd: nexus serve over two catalog servers (the
// LiveMCPBench excerpt, served over Streamable HTTP): search_tools on
// /mcp/bounded, with a session and sessionless, finds a tool once its
// toolbox was listed, and its hit is called by name at once; over REST
// the hit's flat name is called; bad arguments are refused on both; a
// second process on the same data directory finds the tools from the
// listing kept in the store before opening anything.
func TestSearchToolsEndToEnd(t *testing.T) {
	servers, _, err := livemcpbench.Load("../../internal/livemcpbench/testdata")
	if err != nil {
		t.Fatal(err)
	}
	entries := catalog.Entries(servers, 1)
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(conf, catalog.Config(catalog.Start(t, entries), entries), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := startServeIn(t, dir, "--config", conf)

	cs, _ := connect(t, base+"/mcp/bounded")
	h := parseHits(t, text(call(t, cs, "search_tools", map[string]any{"query": "current stock price"})))
	if len(h.Tools) != 0 || strings.Join(h.Unindexed, ",") != "discovery,finance" {
		t.Fatalf("before any toolbox was listed: %+v", h)
	}
	if res := call(t, cs, "open_toolbox", map[string]any{"toolbox": "finance"}); res.IsError {
		t.Fatal(text(res))
	}
	h = parseHits(t, text(call(t, cs, "search_tools", map[string]any{"query": "current stock price"})))
	if len(h.Tools) == 0 || h.Tools[0].Name != "yahoo-finance_get_current_stock_price" {
		t.Fatalf("hits: %+v", h)
	}
	if res := call(t, cs, h.Tools[0].Name, map[string]any{"symbol": "NVDA"}); res.IsError || !strings.Contains(text(res), "NVDA") {
		t.Fatalf("calling the hit by name: %s", text(res))
	}
	if res := call(t, cs, "search_tools", map[string]any{"query": 5}); !res.IsError || !strings.Contains(text(res), "query") {
		t.Errorf("a query that is not a string: %s", text(res))
	}

	// Sessionless (protocol 2026-07-28): the same search, the same call.
	sl := connectSessionless(t, base+"/mcp/bounded")
	h = parseHits(t, text(call(t, sl, "search_tools", map[string]any{"query": "stock price on a date"})))
	if len(h.Tools) == 0 || h.Tools[0].Tool != "get_stock_price_by_date" {
		t.Fatalf("sessionless hits: %+v", h)
	}
	if res := call(t, sl, h.Tools[0].Name, map[string]any{"symbol": "NVDA", "date": "2025-01-02"}); res.IsError {
		t.Fatalf("sessionless call of the hit: %s", text(res))
	}

	// REST: search, then call the hit by its flat name.
	code, res := getJSON(t, "POST", base+"/api/tools/search_tools:call", `{"query":"stock price on a date","limit":3}`)
	hits, _ := res["tools"].([]any)
	if code != 200 || len(hits) == 0 || len(hits) > 3 {
		t.Fatalf("REST search_tools: %d %v", code, res)
	}
	flat := hits[0].(map[string]any)["flat"].(string)
	if flat != "finance__yahoo-finance__get_stock_price_by_date" {
		t.Fatalf("REST hit's flat name %q", flat)
	}
	if code, res = getJSON(t, "POST", base+"/api/tools/"+flat+":call", `{"symbol":"NVDA","date":"2025-01-02"}`); code != 200 {
		t.Fatalf("REST call of the hit: %d %v", code, res)
	}
	if code, res = getJSON(t, "POST", base+"/api/tools/search_tools:call", `{"query":"x","limit":500}`); code != 400 {
		t.Errorf("REST search_tools with limit 500: %d %v", code, res)
	}

	// Another process on the same data directory: the finance listing was
	// kept, so its tools are found before anything is opened.
	base2 := startServeIn(t, dir, "--config", conf)
	cs2, _ := connect(t, base2+"/mcp/bounded")
	h = parseHits(t, text(call(t, cs2, "search_tools", map[string]any{"query": "current stock price"})))
	if len(h.Tools) == 0 || h.Tools[0].Toolbox != "finance" || strings.Join(h.Unindexed, ",") != "discovery" {
		t.Fatalf("a second process: %+v", h)
	}
	if res := call(t, cs2, h.Tools[0].Name, map[string]any{"symbol": "NVDA"}); res.IsError {
		t.Fatalf("a second process, calling a hit of a toolbox it has not opened: %s", text(res))
	}
}
