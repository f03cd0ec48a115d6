package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpserver"
	"github.com/nexus-mcp/nexus/internal/metrics"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// BenchmarkOverheadNexusMetrics is BenchmarkOverheadNexus with the metrics
// as serve has them: the pipeline's observer counting every call and timing
// it in a histogram, and GET /metrics mounted (scraped once, after the timed
// region, to check that every call was counted).
func BenchmarkOverheadNexusMetrics(b *testing.B) {
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
	m := metrics.New(metrics.Options{DB: st.DB()})
	p := pipeline.New(pipeline.Options{Registry: reg, Traces: tw, Sessions: conversation.New(st), Observer: m})
	srv := mcpserver.New(p, mcpserver.Options{Name: "nexus", Version: "bench", Surface: "mcp-http"})
	ts := httptest.NewServer(httpapi.Handler(httpapi.Options{MCP: srv, Loopback: true, Metrics: m.Handler}))
	b.Cleanup(ts.Close)

	benchEcho(b, ts.URL, tw.Flush)

	res, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		b.Fatal(err)
	}
	var counted float64
	if f := fams["nexus_tool_calls_total"]; f != nil {
		for _, s := range f.Metric {
			counted += s.Counter.GetValue()
		}
	}
	// Each session made one untimed warm-up call besides the b.N timed ones.
	if want := float64(b.N + benchClients); counted != want {
		b.Errorf("nexus_tool_calls_total sums to %v, want %v", counted, want)
	}
}
