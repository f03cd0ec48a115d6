package flat_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/nexus-mcp/nexus/internal/metrics"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/store"
)

// BenchmarkOverheadNexusMetrics is BenchmarkOverheadNexus with the metrics
// as serve has them: the pipeline's observer counting every call and timing
// it in a histogram, and GET /metrics mounted (scraped once, after the timed
// region, to check that every call was counted).
func BenchmarkOverheadNexusMetrics(b *testing.B) {
	ts, _, tw := nexusBenchServer(b, func(st *store.Store) (pipeline.Observer, func(func() int, int) http.Handler) {
		m := metrics.New(metrics.Options{DB: st.DB()})
		return m, m.Handler
	})

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
