// Package metrics exposes Nexus's metrics in the Prometheus text format
// (GET /metrics, SPEC section 2), through the official client library and a
// registry of Nexus's own (never the library's global default one):
//
//   - nexus_tool_calls_total{tool,surface,outcome} and
//     nexus_tool_call_duration_seconds{tool,surface}, recorded by the one
//     pipeline through [Metrics.ObserveCall] (a pipeline.Observer);
//   - nexus_downstream_server_up{toolbox,server},
//     nexus_downstream_restarts_total{toolbox,server},
//     nexus_downstream_breaker_open{toolbox,server},
//     nexus_downstream_breaker_opens_total{toolbox,server} and
//     nexus_downstream_retries_total{toolbox,server}, read from the
//     workbench at scrape time ([Options.Servers]);
//   - nexus_mcp_sessions_live and nexus_mcp_sessions_max, read from the
//     HTTP front's session limit at scrape time ([Metrics.Handler]);
//   - go_sql_*{db_name="nexus"}, the store's connection pool (sql.DBStats);
//   - the Go runtime's go_* and the process's process_* metrics.
//
// Every label has a bounded set of values: a tool is a registered tool's
// name or "(unknown)" (never a name a caller made up), a surface is one of
// the surfaces Nexus builds, an outcome "ok", an error code or "TOOL_ERROR".
package metrics

import (
	"database/sql"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// UnknownTool is the tool label of a call of a name the registry does not
// know.
const UnknownTool = "(unknown)"

// DBName is the db_name label of the store's pool metrics.
const DBName = "nexus"

// durationBuckets are the upper bounds (seconds) of the call duration
// histogram: local tools answer in about a millisecond, downstream ones in
// up to their 60 s default timeout.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Server is the state of one downstream server at scrape time (the
// workbench's, given by [Options.Servers]).
type Server struct {
	Toolbox, Server string
	// Up reports whether its session is live.
	Up bool
	// Restarts counts the times its session ended on its own and was
	// restarted.
	Restarts uint64
	// BreakerOpen reports that its circuit breaker refuses calls now (open,
	// or waiting for its probe), and BreakerOpens counts the times it
	// opened.
	BreakerOpen  bool
	BreakerOpens uint64
	// Retries counts its calls safe to repeat that were tried again.
	Retries uint64
}

// Options configure [New].
type Options struct {
	// DB is the store's connection pool; nil means no go_sql_* metrics.
	DB *sql.DB
	// Servers reports the configured downstream servers at scrape time;
	// nil means none.
	Servers func() []Server
	// Logger receives errors of collecting or serving metrics; nil
	// discards them.
	Logger *slog.Logger
}

// Metrics is Nexus's registry of metrics. It is safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	log      *slog.Logger
}

// New returns the metrics of one Nexus process, in a registry of their own.
func New(o Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), log: o.Logger}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nexus_tool_calls_total",
		Help: `Tool calls, through the pipeline or forwarded by the per-server passthrough (surface "proxy"), by tool ("(unknown)" for a name the registry does not know), surface and outcome ("ok", the error code, or TOOL_ERROR for a downstream result marked isError).`,
	}, []string{"tool", "surface", "outcome"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "nexus_tool_call_duration_seconds",
		Help:    "Duration of tool calls through the pipeline, by tool and surface.",
		Buckets: durationBuckets,
	}, []string{"tool", "surface"})
	m.reg.MustRegister(m.calls, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.DB != nil {
		m.reg.MustRegister(collectors.NewDBStatsCollector(o.DB, DBName))
	}
	if o.Servers != nil {
		m.reg.MustRegister(newDownstream(o.Servers))
	}
	return m
}

// ObserveCall records one call (it implements pipeline.Observer): tool is
// the registered tool's name, or "" when the registry does not know it.
func (m *Metrics) ObserveCall(tool, surface, outcome string, d time.Duration) {
	if tool == "" {
		tool = UnknownTool
	}
	m.calls.WithLabelValues(tool, surface, outcome).Inc()
	m.duration.WithLabelValues(tool, surface).Observe(d.Seconds())
}

// Handler serves the metrics in the Prometheus text format, with the live
// MCP sessions as liveSessions reports them at scrape time and their cap
// (the signature of httpapi.Options.Metrics). Each call makes a handler of
// its own; the call metrics are shared.
func (m *Metrics) Handler(liveSessions func() int, maxSessions int) http.Handler {
	sessions := prometheus.NewRegistry()
	sessions.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "nexus_mcp_sessions_live",
			Help: "Live MCP sessions over HTTP, over all MCP endpoints (those counted against nexus_mcp_sessions_max).",
		}, func() float64 { return float64(liveSessions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "nexus_mcp_sessions_max",
			Help: "The cap on live MCP sessions over HTTP (--max-sessions).",
		}, func() float64 { return float64(maxSessions) }),
	)
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, sessions}, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		// A collector that fails leaves the others' metrics served.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// downstream collects the workbench's servers at scrape time.
type downstream struct {
	servers                                    func() []Server
	up, restarts, breaker, breakerOps, retries *prometheus.Desc
}

func newDownstream(servers func() []Server) *downstream {
	labels := []string{"toolbox", "server"}
	return &downstream{
		servers: servers,
		up: prometheus.NewDesc("nexus_downstream_server_up",
			"Whether the downstream server's session is live: 1 connected, 0 not (not opened yet, failed, or restarting).", labels, nil),
		restarts: prometheus.NewDesc("nexus_downstream_restarts_total",
			"Times the downstream server's session ended on its own (a crashed stdio server, a dropped HTTP session) and Nexus began restarting it.", labels, nil),
		breaker: prometheus.NewDesc("nexus_downstream_breaker_open",
			"Whether the downstream server's circuit breaker refuses calls: 1 open (repeated failures; calls fail at once until its cooldown ends and a probe call succeeds), 0 closed.", labels, nil),
		breakerOps: prometheus.NewDesc("nexus_downstream_breaker_opens_total",
			"Times the downstream server's circuit breaker opened.", labels, nil),
		retries: prometheus.NewDesc("nexus_downstream_retries_total",
			"Calls safe to repeat (tools annotated readOnlyHint or idempotentHint, reads of prompts and resources) that Nexus tried again after the downstream server failed them.", labels, nil),
	}
}

func (d *downstream) Describe(ch chan<- *prometheus.Desc) {
	ch <- d.up
	ch <- d.restarts
	ch <- d.breaker
	ch <- d.breakerOps
	ch <- d.retries
}

func (d *downstream) Collect(ch chan<- prometheus.Metric) {
	for _, s := range d.servers() {
		up := 0.0
		if s.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(d.up, prometheus.GaugeValue, up, s.Toolbox, s.Server)
		ch <- prometheus.MustNewConstMetric(d.restarts, prometheus.CounterValue, float64(s.Restarts), s.Toolbox, s.Server)
		open := 0.0
		if s.BreakerOpen {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(d.breaker, prometheus.GaugeValue, open, s.Toolbox, s.Server)
		ch <- prometheus.MustNewConstMetric(d.breakerOps, prometheus.CounterValue, float64(s.BreakerOpens), s.Toolbox, s.Server)
		ch <- prometheus.MustNewConstMetric(d.retries, prometheus.CounterValue, float64(s.Retries), s.Toolbox, s.Server)
	}
}
