// Command toolbench scores Nexus's tool search (issue 27) on LiveMCPBench:
// the catalog's 527 tools are indexed as the hub indexes a catalog (each
// server a server of the toolbox of its category), each of the 95 tasks'
// request is the query, and its annotated tools, matched to the catalog by
// name, are the answers. It prints recall@5, @10 and @25 (the share of a
// task's tools among the first k, averaged over the tasks) and the mean
// reciprocal rank of a task's first tool, for each ranker:
//
//   - bm25: a plain BM25 over each tool's name, description, server and
//     parameters as one text, the baseline of the issue;
//
//   - search: toolsearch as search_tools runs it (BM25F with field weights,
//     identifiers split into words, synonyms, its score threshold);
//
//   - search-nosyn: the same without synonyms;
//
//   - search-noserver: the same without its server's relevance;
//
//   - search-nosupply: the same without lifting the tools that make what
//     the best few require;
//
//   - search-nosink: the same without lifting the tool that writes the
//     file a request saves to.
//
//     go run ./cmd/toolbench [-data DIR] [-v] [-halves] [-q REQUEST]
//
// -v prints each task's misses (each annotated tool with its rank, 0 if
// not found); -halves scores the even and the odd tasks apart too, a
// held-out check that a change helps both; -q prints the ranking of one
// request, with scores, and nothing else.
//
// The benchmark is read from DIR/livemcpbench (default ../shared/data);
// without it the command says so and exits 0. It is a benchmark, not a
// test: `go test ./...` does not run it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/livemcpbench"
	"github.com/nexus-mcp/nexus/internal/textsearch"
	"github.com/nexus-mcp/nexus/internal/toolsearch"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "toolbench:", err)
		os.Exit(1)
	}
}

// ks are the cut-offs of recall.
var ks = []int{5, 10, 25}

func run(args []string, out io.Writer) error {
	fset := flag.NewFlagSet("toolbench", flag.ContinueOnError)
	data := fset.String("data", envOr("NEXUS_SHARED_DATA", filepath.Join("..", "shared", "data")), "the shared data directory (holding livemcpbench/)")
	verbose := fset.Bool("v", false, "print each task's misses")
	query := fset.String("q", "", "print the ranking of this one request, with scores, and nothing else")
	halves := fset.Bool("halves", false, "also score the odd and the even tasks apart (a held-out check: a rule should help both)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	servers, tasks, err := livemcpbench.Load(filepath.Join(*data, "livemcpbench"))
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(out, "LiveMCPBench is not in %s: nothing to score\n", *data)
		return nil
	}
	if err != nil {
		return err
	}
	tools := catalog(servers)
	names := map[string]bool{}
	for _, t := range tools {
		names[t.Tool] = true
	}
	golds, missing := 0, 0
	for _, t := range tasks {
		g, m := t.Gold(names)
		golds += len(g)
		missing += len(m)
	}
	fmt.Fprintf(out, "LiveMCPBench: %d servers, %d tools, %d tasks; %d annotated tools in the catalog, %d not (left out of recall)\n\n",
		len(servers), len(tools), len(tasks), golds, missing)

	start := time.Now()
	ix := toolsearch.New(tools)
	built := time.Since(start)
	if *query != "" {
		for i, h := range ix.Search(*query, 25, nil) {
			fmt.Fprintf(out, "%2d %6.2f %s (%s)\n", i+1, h.Score, h.Tool.Tool, h.Tool.Server)
		}
		return nil
	}
	rankers := []struct {
		name string
		rank func(q string) []string
	}{
		{"bm25", bm25Ranker(tools)},
		{"search", func(q string) []string { return hitNames(ix.Search(q, 100, nil)) }},
		{"search-nosyn", func(q string) []string {
			return hitNames(ix.SearchWith(q, 100, nil, toolsearch.Options{NoSynonyms: true}))
		}},
		{"search-noserver", func(q string) []string {
			return hitNames(ix.SearchWith(q, 100, nil, toolsearch.Options{NoServers: true}))
		}},
		{"search-nosupply", func(q string) []string {
			return hitNames(ix.SearchWith(q, 100, nil, toolsearch.Options{NoSuppliers: true}))
		}},
		{"search-nosink", func(q string) []string {
			return hitNames(ix.SearchWith(q, 100, nil, toolsearch.Options{NoSinks: true}))
		}},
	}
	fmt.Fprintf(out, "%-14s %9s %9s %9s %7s %12s\n", "ranker", "recall@5", "recall@10", "recall@25", "MRR", "p50/query")
	for _, r := range rankers {
		var sums [3]float64
		var mrr float64
		var times []time.Duration
		n := 0
		var half [2]score // the even and the odd tasks
		for ti, t := range tasks {
			gold, _ := t.Gold(names)
			if len(gold) == 0 {
				continue
			}
			n++
			qs := time.Now()
			ranked := r.rank(t.Question)
			times = append(times, time.Since(qs))
			for i, k := range ks {
				sums[i] += livemcpbench.Recall(ranked, gold, k)
			}
			mrr += livemcpbench.ReciprocalRank(ranked, gold)
			half[ti%2].add(ranked, gold)
			if r.name == "search" && os.Getenv("DBG") != "" {
				fmt.Fprintf(os.Stderr, "DBG %.3f %q %v\n", livemcpbench.Recall(ranked, gold, 5), t.Question[:min(60, len(t.Question))], ranked[:min(8, len(ranked))])
			}
			if *verbose && r.name == "search" && livemcpbench.Recall(ranked, gold, 10) < 1 {
				fmt.Fprintf(out, "  %s\n    gold %v\n    top  %v\n", t.Question, ranks(ranked, gold), ranked[:min(10, len(ranked))])
			}
		}
		slices.Sort(times)
		fmt.Fprintf(out, "%-14s %9.3f %9.3f %9.3f %7.3f %12s\n", r.name, sums[0]/float64(n), sums[1]/float64(n), sums[2]/float64(n), mrr/float64(n), times[len(times)/2])
		if *halves {
			for i, name := range []string{"even", "odd"} {
				h := half[i]
				fmt.Fprintf(out, "  %-12s %9.3f %9.3f %9.3f %7.3f\n", name, h.recall[0]/h.n, h.recall[1]/h.n, h.recall[2]/h.n, h.rr/h.n)
			}
		}
	}
	fmt.Fprintf(out, "\nindex of %d tools built in %s\n", ix.Len(), built.Round(time.Microsecond))
	return nil
}

// score sums a ranker's recall at each of ks and reciprocal rank over n
// tasks.
type score struct {
	recall [3]float64
	rr, n  float64
}

func (s *score) add(ranked, gold []string) {
	for i, k := range ks {
		s.recall[i] += livemcpbench.Recall(ranked, gold, k)
	}
	s.rr += livemcpbench.ReciprocalRank(ranked, gold)
	s.n++
}

// catalog is the tools of servers as the hub would index them: each server
// in the toolbox of its category, its tools' parameters from their input
// schemas.
func catalog(servers []livemcpbench.Server) []toolsearch.Tool {
	var out []toolsearch.Tool
	for _, s := range servers {
		toolbox := strings.ToLower(strings.ReplaceAll(s.Category, " ", "-"))
		for _, t := range s.Tools {
			out = append(out, toolsearch.Tool{
				Name: toolbox + "__" + s.Key + "__" + t.Name, Tool: t.Name, Toolbox: toolbox, Server: s.Key,
				Description: t.Description, Params: params(t.InputSchema), ServerDescription: s.Description,
			})
		}
	}
	return out
}

// params are the top-level properties of an input schema.
func params(schema json.RawMessage) []toolsearch.Param {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []toolsearch.Param
	for _, name := range slices.Sorted(mapsKeys(s.Properties)) {
		out = append(out, toolsearch.Param{Name: name, Description: s.Properties[name].Description, Required: slices.Contains(s.Required, name)})
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// ranks are gold's names, each with its rank in ranked (from 1; 0 if
// not there).
func ranks(ranked, gold []string) []string {
	out := make([]string, len(gold))
	for i, g := range gold {
		out[i] = fmt.Sprintf("%s@%d", g, slices.Index(ranked, g)+1)
	}
	return out
}

// hitNames are the tools' own names of hits, in order.
func hitNames(hits []toolsearch.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Tool.Tool
	}
	return out
}

// bm25Ranker is the baseline: plain BM25 over one text per tool (its name,
// description, server and parameters), the query's terms as textsearch
// takes them.
func bm25Ranker(tools []toolsearch.Tool) func(string) []string {
	texts := make([]string, len(tools))
	for i, t := range tools {
		var b strings.Builder
		b.WriteString(t.Tool + " " + t.Description + " " + t.Server)
		for _, p := range t.Params {
			b.WriteString(" " + p.Name + " " + p.Description)
		}
		texts[i] = b.String()
	}
	docs := textsearch.NewDocs(texts)
	return func(q string) []string {
		terms := textsearch.Terms(q)
		df := map[string]int{}
		for _, term := range terms {
			one := textsearch.NewQuery([]string{term})
			for _, s := range one.BM25Docs(docs, map[string]int{term: 1}, len(docs)) {
				if s > 0 {
					df[term]++
				}
			}
		}
		scores := textsearch.NewQuery(terms).BM25Docs(docs, df, len(docs))
		idx := make([]int, len(tools))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case scores[a] > scores[b]:
				return -1
			case scores[a] < scores[b]:
				return 1
			}
			return 0
		})
		var out []string
		for _, i := range idx[:min(100, len(idx))] {
			if scores[i] > 0 {
				out = append(out, tools[i].Tool)
			}
		}
		return out
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
