package workbench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Restart policy of a server whose session ended on its own (a crashed
// stdio server, a dropped HTTP stream): the first restart waits restartMin,
// each further one twice as long up to restartMax, and a session that stayed
// up for healthyAfter starts the sequence again. Variables so that tests can
// shorten them.
var (
	restartMin   = 250 * time.Millisecond
	restartMax   = 30 * time.Second
	healthyAfter = time.Minute
)

// Options configure a [Manager].
type Options struct {
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Stderr receives the standard error of stdio servers; nil means
	// os.Stderr.
	Stderr *os.File
	// ClientName and ClientVersion are the client implementation Nexus
	// announces to downstream servers (default "nexus" and "dev").
	ClientName, ClientVersion string
	// SDKCalls makes every tool call through the SDK client, also on a
	// Streamable HTTP server whose session could take raw tools/call
	// requests (tests compare the two paths).
	SDKCalls bool
	// BreakerFailures and BreakerCooldown configure each server's circuit
	// breaker (breaker.go): it opens after that many calls in a row failed
	// on the server's side, for that long; DefaultBreakerFailures and
	// DefaultBreakerCooldown when zero.
	BreakerFailures int
	BreakerCooldown time.Duration
	// Store keeps each server's last listing (listings.go) for every
	// replica and restart; nil keeps them in memory only.
	Store *store.Store
	// ListingsCheck is how often, at most, a search looks in the store for
	// listings other replicas kept (DefaultListingsCheck when zero).
	ListingsCheck time.Duration
}

// Manager connects the downstream MCP servers of the configured toolboxes
// and serves their tools through the registry (SPEC section 4).
//
// A server is connected when its toolbox is opened ([Manager.Open]) or, when
// it is marked Eager, at [Manager.Start]. Its tools are registered as
// "toolbox__server__tool" with a handler that proxies the call and returns
// the downstream *mcp.CallToolResult unmodified (on a Streamable HTTP server,
// as a raw tools/call request on the SDK client's session: rawcall.go). The tool list follows the
// server's notifications/tools/list_changed; a server whose session ends is
// reconnected with exponential backoff (a stdio server is restarted) until
// [Manager.Close]. Every server has its own session and its own timeouts, so
// a broken or hung server never blocks another.
type Manager struct {
	reg    *registry.Registry
	impl   *mcp.Implementation
	log    *slog.Logger
	stderr *os.File

	breakerFailures int
	breakerCooldown time.Duration
	noRaw           bool // Options.SDKCalls
	store           *store.Store

	// lmu guards the servers' last listings (listings.go) and their
	// version.
	lmu             sync.Mutex
	listings        map[serverKey]listing
	listingsVersion uint64
	// listingsChecked is when followListings last looked at the store,
	// listingsSeen what it found (how many listings, the latest time).
	listingsChecked time.Time
	listingsSeen    [2]int64
	listingsCheck   time.Duration

	ctx    context.Context // ends at Close; every connection derives from it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the manager starts

	reloadMu sync.Mutex // one Reload at a time

	mu        sync.Mutex
	toolboxes []*toolbox // config order; replaced, never changed, by Reload
	closed    bool
	opened    map[string]bool
	// all reports whether OpenAll has run: a client of a surface that
	// lists every tool connected, so a reload connects new servers at once.
	all bool
}

// toolbox is a configured toolbox and its servers (never changed once
// built: a reload builds new ones).
type toolbox struct {
	name, description string
	servers           []*server // config order
}

// NewManager returns a manager of cfg's toolboxes that registers their tools
// in reg. It connects nothing until [Manager.Start] or [Manager.Open].
func NewManager(cfg *config.Config, reg *registry.Registry, o Options) *Manager {
	m := &Manager{reg: reg, log: o.Logger, stderr: o.Stderr, noRaw: o.SDKCalls, opened: map[string]bool{},
		store: o.Store, listings: map[serverKey]listing{}, listingsCheck: cmp.Or(o.ListingsCheck, DefaultListingsCheck),
		breakerFailures: o.BreakerFailures, breakerCooldown: o.BreakerCooldown}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.stderr == nil {
		m.stderr = os.Stderr
	}
	impl := &mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}
	if impl.Name == "" {
		impl.Name = "nexus"
	}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	m.impl = impl
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.toolboxes, _, _ = m.build(cfg, nil)
	return m
}

// build makes the toolboxes of cfg. A server of old whose configuration is
// unchanged is kept as it is (connected or not); the others are new. It
// returns the toolboxes, the servers of old not kept, and the new servers.
func (m *Manager) build(cfg *config.Config, old []*toolbox) (tbs []*toolbox, dropped, added []*server) {
	kept := map[*server]bool{}
	if cfg != nil {
		for _, name := range ordered(cfg.Order, cfg.Toolboxes) {
			tc := cfg.Toolboxes[name]
			if tc == nil {
				continue
			}
			tb := &toolbox{name: name, description: tc.Description}
			for _, sname := range ordered(tc.Order, tc.Servers) {
				sc := tc.Servers[sname]
				if sc == nil {
					continue
				}
				if s := find(old, name, sname); s != nil && s.same(sc) {
					kept[s] = true
					tb.servers = append(tb.servers, s)
					continue
				}
				s := newServer(m, name, sname, sc, m.impl)
				added = append(added, s)
				tb.servers = append(tb.servers, s)
			}
			tbs = append(tbs, tb)
		}
	}
	for _, tb := range old {
		for _, s := range tb.servers {
			if !kept[s] {
				dropped = append(dropped, s)
			}
		}
	}
	return tbs, dropped, added
}

// find returns the server named sname of the toolbox named tb in tbs.
func find(tbs []*toolbox, tb, sname string) *server {
	for _, t := range tbs {
		if t.name != tb {
			continue
		}
		for _, s := range t.servers {
			if s.name == sname {
				return s
			}
		}
	}
	return nil
}

// list is the toolboxes now, in config order.
func (m *Manager) list() []*toolbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.toolboxes
}

// ordered returns the keys of m in the order given, followed by any key the
// order misses, sorted.
func ordered[V any](order []string, m map[string]V) []string {
	out := make([]string, 0, len(m))
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Start connects the servers marked Eager, in parallel and in the
// background; it returns at once. A server that fails is reported in the log
// and retried when its toolbox is opened (see [Manager.OpenAll] for when a
// client's connection retries it).
func (m *Manager) Start(ctx context.Context) {
	if err := m.loadListings(ctx); err != nil {
		m.log.WarnContext(ctx, "search_tools covers only the toolboxes opened since this start", "err", err)
	}
	for _, tb := range m.list() {
		for _, s := range tb.servers {
			if s.cfg.Eager {
				m.log.DebugContext(ctx, "connecting eager downstream server", "toolbox", tb.name, "server", s.name)
				s.kick()
			}
		}
	}
}

// Close disconnects every server, ends the stdio servers' processes, stops
// restarts and waits for every goroutine of the manager to end. Tools stay
// in the registry; calling them afterwards fails with SERVICE_UNAVAILABLE.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.cancel()
	m.mu.Unlock()
	m.wg.Wait()
	return nil
}

// goroutine runs fn in a goroutine that [Manager.Close] waits for; it
// reports false, and runs nothing, once the manager is closed.
func (m *Manager) goroutine(fn func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
	return true
}

// Toolboxes lists the configured toolboxes in config order.
func (m *Manager) Toolboxes() []registry.Toolbox {
	tbs := m.list()
	out := make([]registry.Toolbox, 0, len(tbs))
	for _, tb := range tbs {
		info := registry.Toolbox{Name: tb.name, Description: tb.description, Servers: []string{}}
		for _, s := range tb.servers {
			info.Servers = append(info.Servers, s.name)
			if s.cfg.Description != "" {
				if info.ServerDescriptions == nil {
					info.ServerDescriptions = map[string]string{}
				}
				info.ServerDescriptions[s.name] = s.cfg.Description
			}
		}
		out = append(out, info)
	}
	return out
}

// ServerState is a snapshot of one configured downstream server (see
// [Manager.Servers]).
type ServerState struct {
	Toolbox, Server string
	// Connected reports whether its session is live now.
	Connected bool
	// Restarts counts the times its session ended on its own (a crashed
	// stdio server, a dropped HTTP session) and Nexus began restarting it;
	// the failed attempts of one restart count once.
	Restarts uint64
	// Breaker is the state of its circuit breaker (BreakerClosed,
	// BreakerOpen, BreakerHalfOpen) and BreakerOpens the times it opened.
	Breaker      string
	BreakerOpens uint64
	// Retries counts the calls safe to repeat that were tried again after
	// the server failed them (retry.go).
	Retries uint64
}

// Servers reports the state of every configured server, by toolbox and
// server in config order. It only reads: it connects nothing.
func (m *Manager) Servers() []ServerState {
	var out []ServerState
	for _, tb := range m.list() {
		for _, s := range tb.servers {
			breaker, opens := s.breaker.state(time.Now())
			s.mu.Lock()
			out = append(out, ServerState{Toolbox: tb.name, Server: s.name, Connected: s.sess.live(), Restarts: s.restarts, Breaker: breaker, BreakerOpens: opens, Retries: s.retries.count()})
			s.mu.Unlock()
		}
	}
	return out
}

func (m *Manager) toolbox(name string) *toolbox {
	for _, tb := range m.list() {
		if tb.name == name {
			return tb
		}
	}
	return nil
}

// Open connects the servers of the toolbox that are not connected yet (all
// in parallel, each bounded by its ConnectTimeout), registers their tools
// and reports the toolbox's state. It is idempotent: opening an open toolbox
// retries only its failed servers. A server that fails is reported in
// ServerErrors and never fails the others or the call. When none of the
// toolbox's servers is connected, Open returns the state and an
// UNAVAILABLE error in the MCP Workbench's words, naming the first server
// that failed: "Error opening toolbox 'NAME': Failed to connect to MCP
// server 'SERVER': CAUSE" (a toolbox with no servers opens, empty). An
// unknown toolbox is NOT_FOUND with seed 003's text.
func (m *Manager) Open(ctx context.Context, name string) (*registry.Opened, error) {
	tb := m.toolbox(name)
	if tb == nil {
		return nil, errs.E(errs.NotFound, "Toolbox '%s' not found", name)
	}
	if !m.markOpened(name) {
		return nil, errs.E(errs.Unavailable, "Toolbox '%s' cannot be opened: the workbench is shutting down", name)
	}
	start := time.Now()
	failed := make([]error, len(tb.servers))
	var wg sync.WaitGroup
	for i, s := range tb.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed[i] = s.ensure(ctx)
		}()
	}
	wg.Wait()

	o := &registry.Opened{Toolbox: tb.name, Description: tb.description, ServersConnected: []string{},
		ServerErrors: map[string]string{}, Tools: []*registry.Tool{}}
	for i, s := range tb.servers {
		st := s.status()
		switch {
		case st.connected:
			o.ServersConnected = append(o.ServersConnected, s.name)
			if st.problems != "" {
				o.ServerErrors[s.name] = st.problems
			}
		case failed[i] != nil:
			o.ServerErrors[s.name] = failed[i].Error()
		case st.down != nil:
			o.ServerErrors[s.name] = st.down.Error()
		default:
			o.ServerErrors[s.name] = "not connected"
		}
		for _, id := range st.tools {
			if t, ok := m.reg.LookupID(id); ok {
				o.Tools = append(o.Tools, t)
			}
		}
	}
	m.log.InfoContext(ctx, "toolbox opened", "toolbox", tb.name, "servers", len(tb.servers),
		"connected", len(o.ServersConnected), "tools", len(o.Tools), "duration", time.Since(start))
	if len(tb.servers) > 0 && len(o.ServersConnected) == 0 {
		first := tb.servers[0].name
		return o, &errs.Error{Code: errs.Unavailable, Err: failed[0],
			Message: fmt.Sprintf("Error opening toolbox '%s': Failed to connect to MCP server '%s': %s", tb.name, first, o.ServerErrors[first])}
	}
	return o, nil
}

// markOpened records that the toolbox has been opened; false once the
// manager is closed.
func (m *Manager) markOpened(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.opened[name] = true
	}
	return !m.closed
}

// Resolve makes the downstream tool of the flat name toolbox__server__tool
// callable if its server is configured but not connected yet: it connects
// that server (or joins the attempt under way) and waits for it, bounded by
// the server's ConnectTimeout (and ctx). The pipeline calls it for a flat
// name the registry lacks (pipeline.Options.Resolve), so that a call made
// right after a client connects does not race the toolbox's opening. Only
// the named server is connected, and only when the name can be one of its
// tools: a typo starts no connection (for a stdio server, no process).
//
// It returns nil when the server is connected (the pipeline looks the name
// up again), at once when the server's tools are known already (connected,
// or restarting after its session ended: a name the registry lacks is then
// no tool of the server's); a NOT_FOUND "unknown tool" error, as the
// pipeline words it, at once when the name names no configured toolbox or
// no server of it, or has no tool part; and an UNAVAILABLE error naming the
// server and the cause when the server does not connect.
func (m *Manager) Resolve(ctx context.Context, name string) error {
	unknown := errs.E(errs.NotFound, "unknown tool %q", name)
	toolbox, rest, ok := strings.Cut(name, "__")
	tb := m.toolbox(toolbox)
	if !ok || tb == nil {
		return m.resolvePlain(ctx)
	}
	sname, tool, ok := strings.Cut(rest, "__")
	var target *server
	for _, s := range tb.servers {
		if s.name == sname {
			target = s
		}
	}
	if !ok || tool == "" || target == nil {
		return unknown
	}
	if target.toolsKnown() {
		return nil
	}
	if !m.markOpened(tb.name) {
		return errs.E(errs.Unavailable, "Toolbox '%s' cannot be opened: the workbench is shutting down", tb.name)
	}
	if err := target.ensure(ctx); err != nil {
		return &errs.Error{Code: errs.Unavailable, Err: err,
			Message: fmt.Sprintf("Failed to connect to MCP server '%s' (toolbox '%s'): %v", target.name, tb.name, err)}
	}
	return nil
}

// resolvePlain waits for the first connection of every server of a plain
// toolbox whose tools are not known yet (each within its connect timeout):
// a name without a toolbox prefix may be one of theirs. Nothing to wait
// for is no error; the caller looks the name up again.
func (m *Manager) resolvePlain(ctx context.Context) error {
	var waiting []*server
	for _, tb := range m.list() {
		for _, s := range tb.servers {
			if s.cfg.Plain && !s.toolsKnown() {
				waiting = append(waiting, s)
			}
		}
	}
	var wg sync.WaitGroup
	for _, s := range waiting {
		if !m.markOpened(s.toolbox) {
			return errs.E(errs.Unavailable, "Toolbox '%s' cannot be opened: the workbench is shutting down", s.toolbox)
		}
		wg.Go(func() { _ = s.ensure(ctx) })
	}
	wg.Wait()
	return nil
}

// OpenAll opens every toolbox for a client that connects (the flat and
// agents surfaces call it at initialize, and make the session's first
// tools/list wait for it), so that every downstream tool is listed. Unlike
// [Manager.Open] it does not hold the client up for servers that are known
// to be broken: it starts and waits for the first connection attempt of
// each server (bounded by the server's ConnectTimeout, and by ctx), but not
// for a server that was up and is restarting (on its own backoff schedule)
// or whose last attempt failed (retried here in the background once its
// retry delay since that failure has passed, which doubles from 250 ms to
// 30 s with each failure; a call of one of its tools or an Open retries it
// at once). Failures are logged.
func (m *Manager) OpenAll(ctx context.Context) {
	var wg sync.WaitGroup
	m.mu.Lock()
	m.all = true
	m.mu.Unlock()
	for _, tb := range m.list() {
		if !m.markOpened(tb.name) {
			return
		}
		for _, s := range tb.servers {
			a := s.open()
			if a == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-a.done: // connect logs the outcome
				case <-ctx.Done():
				}
			}()
		}
	}
	wg.Wait()
}

// Opened reports whether the toolbox has been opened.
func (m *Manager) Opened(toolbox string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.opened[toolbox]
}
