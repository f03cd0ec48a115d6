// Command locomo measures Nexus's retrieval on the LoCoMo benchmark (issue
// 23): it loads each of the benchmark's conversations into its own workspace,
// one belief per dialog turn ("Speaker: text [shares caption]", valid from
// the session's time), through belief_create_batch as `nexus import beliefs`
// does, then asks every question through each retriever (belief_query, ...)
// and prints evidence recall@k overall and per category, the load time and
// the tensions the load found.
//
//	go run ./cmd/locomo [-data DIR] [-db URL] [-k 1,5,10,25] [-limit N]
//
// The benchmark is read from the shared data (DIR/locomo/locomo10.json,
// default ../shared/data); without it the command says so and exits 0. It
// is a benchmark, not a test: `go test ./...` does not run it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/locomo"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "locomo:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	data  string
	db    string
	ks    []int
	limit int
	// show is how many of the load's tensions to print (-1: all).
	show int
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.data, "data", "../shared/data", "the shared data directory (holds "+locomo.File+")")
	fs.StringVar(&o.db, "db", "", "a postgres:// URL to load into (default: a new SQLite database in a temporary directory)")
	ks := fs.String("k", "1,5,10,25", "the cut-offs of recall@k, comma-separated")
	fs.IntVar(&o.limit, "limit", 0, "ask at most this many questions of each conversation (0: all)")
	fs.IntVar(&o.show, "tensions", 5, "print at most this many of the tensions found on the load (-1: all)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, f := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 100 {
			return nil, fmt.Errorf("-k: %q is not a cut-off between 1 and 100", f)
		}
		o.ks = append(o.ks, k)
	}
	slices.Sort(o.ks)
	o.ks = slices.Compact(o.ks)
	if o.limit < 0 {
		return nil, fmt.Errorf("-limit: %d is negative", o.limit)
	}
	if o.show < -1 {
		return nil, fmt.Errorf("-tensions: %d is neither a count nor -1 (all)", o.show)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	path := filepath.Join(o.data, locomo.File)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "locomo: %s is absent: nothing to measure (the benchmark lives in the shared data; -data names its directory)\n", path)
		return nil
	}
	convs, err := locomo.Load(path)
	if err != nil {
		return err
	}
	cfg := app.Config{DBURL: o.db, Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if o.db == "" {
		dir, err := os.MkdirTemp("", "nexus-locomo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()

	b := &bench{p: a.Pipeline, run: strconv.FormatInt(time.Now().Unix(), 36)}
	start := time.Now()
	turns := 0
	for _, c := range convs {
		n, err := b.load(ctx, c)
		if err != nil {
			return err
		}
		turns += n
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "LoCoMo: %d conversations, %d turns loaded as beliefs in %.1f s (%s)\n", len(convs), turns, took.Seconds(), a.Store.Dialect())
	b.printTensions(stdout, o.show)

	maxK := o.ks[len(o.ks)-1]
	for _, r := range retrievers() {
		rec := locomo.NewRecall(o.ks...)
		var miss misses
		var lat []time.Duration
		asked := 0
		for _, c := range convs {
			qs := c.Questions
			if o.limit > 0 && len(qs) > o.limit {
				qs = qs[:o.limit]
			}
			for _, q := range qs {
				t0 := time.Now()
				ranked, err := r.ask(ctx, b, c, q, maxK)
				if err != nil {
					return fmt.Errorf("%s, %s %q: %w", r.name, c.ID, q.Text, err)
				}
				lat = append(lat, time.Since(t0))
				rec.Add(q, ranked)
				miss.add(b, c, q, ranked)
				asked++
			}
		}
		slices.Sort(lat)
		fmt.Fprintf(stdout, "\n%s: %d questions, evidence recall@k (%%), p50 %.2f ms a question\n\n%s",
			r.name, asked, ms(lat[len(lat)/2]), rec.Table())
		fmt.Fprintf(stdout, "\nevidence turns: %d; found in the first %d: %d; not found, sharing a query term's stem: %d; not found, sharing none: %d\n",
			miss.total, maxK, miss.found, miss.sharing, miss.none)
	}
	return nil
}

// misses counts the evidence turns a retriever found in its results, and
// those it did not by whether they share a query term (stemmed) with the
// question: a turn that shares none cannot be found lexically.
type misses struct {
	total, found, sharing, none int
}

func (m *misses) add(b *bench, c locomo.Conversation, q locomo.Question, ranked []string) {
	stems := map[string]bool{}
	for _, t := range textsearch.Terms(q.Text) {
		stems[textsearch.Stem(t)] = true
	}
	for _, e := range q.Evidence {
		m.total++
		switch {
		case slices.Contains(ranked, e):
			m.found++
		case slices.ContainsFunc(textsearch.Tokens(b.turns[c.ID][e]), func(t string) bool { return stems[textsearch.Stem(t)] }):
			m.sharing++
		default:
			m.none++
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// retriever answers a question with the dia_ids of the turns it finds, best
// first, at most k.
type retriever struct {
	name string
	ask  func(ctx context.Context, b *bench, c locomo.Conversation, q locomo.Question, k int) ([]string, error)
}

// retrievers are the ways the benchmark asks its questions, each measured
// on the whole set. Another retriever (exchange_search over the same
// conversations loaded as exchanges) goes here.
func retrievers() []retriever {
	return []retriever{
		{name: "belief_query", ask: askBeliefQuery},
	}
}

// askBeliefQuery asks q through belief_query in c's workspace.
func askBeliefQuery(ctx context.Context, b *bench, c locomo.Conversation, q locomo.Question, k int) ([]string, error) {
	args, err := json.Marshal(map[string]any{"query": q.Text, "limit": k})
	if err != nil {
		return nil, err
	}
	out, err := b.call(ctx, "belief_query", b.workspace(c), args)
	if err != nil {
		return nil, err
	}
	var res struct {
		Beliefs []struct {
			ID string `json:"id"`
		} `json:"beliefs"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("belief_query result: %w", err)
	}
	ranked := make([]string, 0, len(res.Beliefs))
	for _, r := range res.Beliefs {
		ranked = append(ranked, b.diaID[r.ID])
	}
	return ranked, nil
}

// bench is the loaded benchmark: which belief is which turn, and the
// tensions the load found.
type bench struct {
	p *pipeline.Pipeline
	// run makes the workspaces of this run new in a database loaded before
	// (-db).
	run      string
	diaID    map[string]string // belief id -> the turn's dia_id
	content  map[string]string // belief id -> content
	tensions []substrate.Tension
	turns    map[string]map[string]string // conversation -> dia_id -> content
}

func (b *bench) workspace(c locomo.Conversation) string { return "locomo-" + b.run + "-" + c.ID }

// call runs one tool call through the pipeline in workspace ws.
func (b *bench) call(ctx context.Context, tool, ws string, args []byte) (json.RawMessage, error) {
	o := b.p.Call(ctx, pipeline.Request{Tool: tool, Args: args, Surface: "cli", Context: &pipeline.CallContext{WorkspaceID: ws}})
	if o.Err != nil {
		return nil, o.Err
	}
	return o.Result, nil
}

// load creates c's turns as beliefs in c's workspace, substrate.MaxBatch a
// call, and returns how many it created.
func (b *bench) load(ctx context.Context, c locomo.Conversation) (int, error) {
	if b.diaID == nil {
		b.diaID, b.content, b.turns = map[string]string{}, map[string]string{}, map[string]map[string]string{}
	}
	b.turns[c.ID] = map[string]string{}
	type item struct {
		Content   string    `json:"content"`
		ValidFrom time.Time `json:"valid_from"`
	}
	var items []item
	var dia []string
	for _, s := range c.Sessions {
		for _, t := range s.Turns {
			items = append(items, item{Content: t.Content(), ValidFrom: s.At})
			b.turns[c.ID][t.DiaID] = strings.TrimPrefix(t.Content(), t.Speaker+": ")
			dia = append(dia, t.DiaID)
		}
	}
	created := 0
	for start := 0; start < len(items); start += substrate.MaxBatch {
		end := min(start+substrate.MaxBatch, len(items))
		args, err := json.Marshal(map[string]any{"beliefs": items[start:end]})
		if err != nil {
			return 0, err
		}
		out, err := b.call(ctx, "belief_create_batch", b.workspace(c), args)
		if err != nil {
			return 0, fmt.Errorf("load %s: %w", c.ID, err)
		}
		var res substrate.BatchResult
		if err := json.Unmarshal(out, &res); err != nil {
			return 0, fmt.Errorf("belief_create_batch result: %w", err)
		}
		for _, r := range res.Results {
			if r.Error != nil {
				return 0, fmt.Errorf("load %s turn %s: %s", c.ID, dia[start+r.Index], r.Error.Message)
			}
			b.diaID[r.BeliefID] = dia[start+r.Index]
			b.content[r.BeliefID] = items[start+r.Index].Content
			b.tensions = append(b.tensions, r.Tensions...)
		}
		created += res.Created
	}
	return created, nil
}

// printTensions writes how many tensions the load found and the first show
// of them (all if show is -1).
func (b *bench) printTensions(w io.Writer, show int) {
	fmt.Fprintf(w, "tensions found on the load: %d\n", len(b.tensions))
	for i, t := range b.tensions {
		if i == show {
			break
		}
		fmt.Fprintf(w, "  %s %s (%s):\n    %s: %s\n    %s: %s\n", t.Type, t.Severity, clip(t.Description, 120),
			b.diaID[t.BeliefAID], clip(b.content[t.BeliefAID], 160), b.diaID[t.BeliefBID], clip(b.content[t.BeliefBID], 160))
	}
}

func clip(s string, n int) string {
	s = string(bytes.ToValidUTF8([]byte(s), nil))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
