package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/oauth"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/proxy"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/rest"
	"github.com/nexus-mcp/nexus/internal/stdio"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/streamable"
	"github.com/nexus-mcp/nexus/internal/users"
	"github.com/nexus-mcp/nexus/internal/webui"
	"github.com/nexus-mcp/nexus/internal/ws"
)

// DefaultAddr is where nexus serve listens by default.
const DefaultAddr = "127.0.0.1:7777"

// MaxStdioMessage bounds one JSON-RPC message on stdio (4 MiB); a larger one
// ends the connection, since the stream cannot be resynchronized.
const MaxStdioMessage = 4 << 20

func versionString() string { return app.Version }

// common holds the flags every command shares.
type common struct {
	dataDir, db, logLevel, config string
	noDemo                        bool
	// transport is what serve and stdio serve the surfaces over.
	transport string
	// events names the event engine between replicas: serve's --events,
	// NEXUS_EVENTS for every command (the commands that change users,
	// tokens, workspaces or keys tell the replicas over it).
	events string
	// vault is a folder of notes served besides the configuration's.
	vault string
}

func (c *common) register(fs *flag.FlagSet) {
	c.events = os.Getenv("NEXUS_EVENTS")
	fs.StringVar(&c.dataDir, "data-dir", os.Getenv("NEXUS_DATA_DIR"), "data directory holding the SQLite database (env NEXUS_DATA_DIR; default: the user's data directory)")
	fs.StringVar(&c.db, "db", os.Getenv("NEXUS_DB"), "database: a postgres:// or postgresql:// URL for PostgreSQL, or a SQLite file path (or sqlite:PATH) (env NEXUS_DB; default: nexus.db in the data directory)")
	fs.StringVar(&c.logLevel, "log-level", os.Getenv("NEXUS_LOG_LEVEL"), "log level: debug, info, warn or error (env NEXUS_LOG_LEVEL; default info for serve and stdio, warn for the other commands)")
	fs.BoolVar(&c.noDemo, "no-demo", false, "do not load the demo knowledge base into a new database")
	fs.StringVar(&c.config, "config", os.Getenv("NEXUS_CONFIG"), "configuration file of toolboxes of downstream MCP servers: Nexus YAML, MCP Workbench or desktop-client (mcpServers) format (env NEXUS_CONFIG)")
	fs.StringVar(&c.vault, "vault", os.Getenv("NEXUS_VAULT"), "a folder of Markdown notes to serve with the vault agents, named after the folder, besides the configuration's vaults (env NEXUS_VAULT; docs/vault.md)")
}

// openAdmin opens the app for an administrative command (users, tokens,
// workspaces, keys, reload): the database is checked first (checkDB), no
// demo data is loaded into a new one, and no configuration file is read.
func (c *common) openAdmin(ctx context.Context, stderr io.Writer) (*app.App, error) {
	if err := checkDB(c.db); err != nil {
		return nil, err
	}
	c.noDemo, c.config, c.vault = true, "", ""
	a, _, err := c.open(ctx, stderr)
	return a, err
}

// open opens the app. The command has checked c.db (checkDB) before,
// so that a --db Nexus cannot open is refused before anything is created.
func (c *common) open(ctx context.Context, stderr io.Writer) (*app.App, *slog.Logger, error) {
	var level slog.Level
	name := c.logLevel
	if name == "" {
		// serve and stdio log their start, their downstream servers and
		// their stop; a command that runs once (call, import, users, ...)
		// writes to standard error only when something is wrong, not the
		// migrations of a new database or the demo data loaded.
		name = "warn"
		if c.transport != "" {
			name = "info"
		}
	}
	if err := level.UnmarshalText([]byte(name)); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// The server's model, for the chat and tn_session_ask (none: users may
	// bring their own).
	model, err := llm.FromEnv(os.Getenv, nil)
	if err != nil {
		return nil, nil, err
	}
	// The server's embedding model, for hybrid search (none: the
	// configuration file's, else searches are lexical).
	var emb embed.Embedder
	if es, ok, err := embed.FromEnv(os.Getenv); err != nil {
		return nil, nil, err
	} else if ok {
		if emb, err = embed.New(es); err != nil {
			return nil, nil, err
		}
	}
	a, err := app.Open(ctx, app.Config{DataDir: c.dataDir, DBURL: c.db, ConfigPath: c.config, Demo: !c.noDemo, Transport: c.transport, Logger: log,
		Model: model, Events: c.events, Embeddings: emb, Vault: c.vault})
	if err == nil && model != nil {
		log.Info("language model", "model", model.Name())
	}
	return a, log, err
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// envInt is the integer value of environment variable k, or def when it is
// unset; a value that is not an integer becomes -1, which the command's
// checks refuse.
func envInt(k string, def int) int {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return -1
	}
	return n
}

// newFlagSet returns the flag set of command name ("serve", "users add"):
// its help (fs.Usage: the synopsis and the flags) goes to stdout, where
// --help asks for it; parse reports mistakes on stderr.
func newFlagSet(name, synopsis string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: %s\n\nFlags:\n", synopsis)
		printFlags(stdout, fs)
	}
	return fs
}

// isHelp reports whether arg asks for help, as the flag package reads it.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// parse parses flags. -h, -help or --help prints the command's help
// (fs.Usage) and exits 0; any other mistake is named on fs's output with
// one line pointing to the help (not the whole help, which would push the
// error off the screen), and exits 2.
func parse(fs *flag.FlagSet, args []string) error {
	help, out := fs.Usage, fs.Output()
	// The flag package prints its error and calls Usage on every mistake:
	// this function says it instead, with --flag as the help writes flags.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = help
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		help()
		return exitError{0}
	}
	fmt.Fprintf(out, "nexus %s: %s\nRun \"nexus %s --help\" for its flags.\n", fs.Name(), flagError(err), fs.Name())
	return exitError{2}
}

// singleDash is a flag written with one dash in the flag package's errors.
var singleDash = regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]*)`)

// flagError is the flag package's error as the help writes flags, with two
// dashes: "unknown flag --bogus" for "flag provided but not defined: -bogus".
func flagError(err error) string {
	msg := strings.Replace(err.Error(), "flag provided but not defined: ", "unknown flag ", 1)
	return singleDash.ReplaceAllString(msg, "$1--$2")
}

// openAll opens every configured toolbox (nil without a configuration).
func openAll(a *app.App) func(context.Context) {
	if a.Workbench == nil {
		return nil
	}
	return a.Workbench.OpenAll
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "nexus serve [--addr HOST:PORT] [--config FILE] [--data-dir DIR] [--db URL]", stdout, stderr)
	var c common
	c.register(fs)
	addr := fs.String("addr", envOr("NEXUS_ADDR", DefaultAddr), "listen address (env NEXUS_ADDR)")
	allowHosts := fs.String("allow-hosts", os.Getenv("NEXUS_ALLOW_HOSTS"), "comma-separated host names clients use to reach Nexus, besides loopback ones; required beyond loopback (env NEXUS_ALLOW_HOSTS)")
	allowOrigins := fs.String("allow-origins", os.Getenv("NEXUS_ALLOW_ORIGINS"), "comma-separated origins whose web pages may call Nexus (CORS), e.g. https://app.example.com (env NEXUS_ALLOW_ORIGINS)")
	tokenRate := fs.Float64("token-rate", envFloat("NEXUS_TOKEN_RATE", DefaultTokenRate), "requests a second each user's token may make (bursts of twice that, at least 10); 0 for no limit (env NEXUS_TOKEN_RATE)")
	maxSessions := fs.Int("max-sessions", envInt("NEXUS_MAX_SESSIONS", streamable.DefaultMaxSessions), "live MCP sessions over HTTP on this replica, at most; the one idle the longest is closed to make room; sessionless listening streams are capped at as many (env NEXUS_MAX_SESSIONS)")
	maxPerUser := fs.Int("max-sessions-per-user", envInt("NEXUS_MAX_SESSIONS_PER_USER", 0), "each user's share of --max-sessions (and of the listening streams): past it their own idle session is closed, or with each busy they get 429; 0 for a tenth of --max-sessions, at least 10 but at most half; anonymous-tier users share one, the local user has the whole cap (env NEXUS_MAX_SESSIONS_PER_USER)")
	maxTurns := fs.Int("max-turns", envInt("NEXUS_MAX_TURNS", quota.DefaultMaxTurns), "chat turns one user may run at once, over all their WebSockets on every replica; one more is refused with RATE_LIMITED (env NEXUS_MAX_TURNS)")
	wsIdle := fs.Duration("ws-idle-timeout", envDuration("NEXUS_WS_IDLE_TIMEOUT", ws.DefaultIdleTimeout), "a chat WebSocket that sends nothing, runs no turn and receives nothing for this long is closed (env NEXUS_WS_IDLE_TIMEOUT)")
	wsPerUser := fs.Int("ws-max-per-user", envInt("NEXUS_WS_MAX_PER_USER", ws.DefaultMaxPerUser), "chat WebSockets one user may hold open at once on this replica (env NEXUS_WS_MAX_PER_USER)")
	retention := retentionFlag(fs)
	fs.StringVar(&c.events, "events", os.Getenv("NEXUS_EVENTS"), "events between replicas: a nats:// URL, or empty for PostgreSQL LISTEN/NOTIFY with --db postgres://... (in process otherwise) (env NEXUS_EVENTS)")
	drainDelay := fs.Duration("drain-delay", envDuration("NEXUS_DRAIN_DELAY", 0), "on SIGTERM, how long /readyz answers 503 before the listener closes, so that a load balancer stops sending requests first (env NEXUS_DRAIN_DELAY)")
	drainTimeout := fs.Duration("drain-timeout", envDuration("NEXUS_DRAIN_TIMEOUT", DefaultDrainTimeout), "on SIGTERM, how long calls in flight may take to finish before the process exits (env NEXUS_DRAIN_TIMEOUT)")
	oauthConfig := oauthFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddr(*addr); err != nil {
		return err
	}
	if *drainDelay < 0 || *drainTimeout <= 0 {
		return fmt.Errorf("--drain-delay (env NEXUS_DRAIN_DELAY) must be 0 or a duration such as 5s, and --drain-timeout (env NEXUS_DRAIN_TIMEOUT) a duration such as 15s")
	}
	oc, err := oauthConfig()
	if err != nil {
		return err
	}
	keep, err := retention()
	if err != nil {
		return err
	}
	var verifier *oauth.Verifier
	if oc != nil {
		// Checked before anything is opened: a bad issuer or audience is
		// a start-up error.
		if _, err := oauth.New(*oc, nil); err != nil {
			return fmt.Errorf("--oauth-* (env NEXUS_OAUTH_*): %w", err)
		}
	}
	if *tokenRate < 0 {
		return fmt.Errorf("--token-rate (env NEXUS_TOKEN_RATE) must be 0 (no limit) or more requests a second")
	}
	if *maxTurns < 1 {
		return fmt.Errorf("--max-turns (env NEXUS_MAX_TURNS) must be a whole number of turns, 1 or more")
	}
	if *wsIdle <= 0 {
		return fmt.Errorf("--ws-idle-timeout (env NEXUS_WS_IDLE_TIMEOUT) must be a duration such as 5m")
	}
	if *wsPerUser < 1 {
		return fmt.Errorf("--ws-max-per-user (env NEXUS_WS_MAX_PER_USER) must be a whole number of WebSockets, 1 or more")
	}
	if *maxSessions < 1 {
		return fmt.Errorf("--max-sessions (env NEXUS_MAX_SESSIONS) must be a whole number of sessions, 1 or more")
	}
	if *maxPerUser < 0 {
		return fmt.Errorf("--max-sessions-per-user (env NEXUS_MAX_SESSIONS_PER_USER) must be 0 (the default share) or a whole number of sessions")
	}
	hosts, origins := splitList(*allowHosts), splitList(*allowOrigins)
	if err := checkHosts(hosts); err != nil {
		return err
	}
	if err := checkOrigins(origins); err != nil {
		return err
	}
	if !httpapi.IsLoopbackAddr(*addr) && len(hosts) == 0 {
		// Refused before anything is opened or created.
		return fmt.Errorf("serve on %s needs --allow-hosts (env NEXUS_ALLOW_HOSTS): the host names clients use to reach Nexus, "+
			"e.g. --allow-hosts nexus.example.com; beyond loopback every request also needs a user's token (nexus users add NAME) or an OAuth access token (--oauth-issuer)", *addr)
	}
	// Listen first: a busy port is reported before any database is created
	// (and a --db Nexus cannot open is refused before it listens).
	if err := checkDB(c.db); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	defer ln.Close()
	a, log, err := c.openServing(ctx, stderr, "http")
	if err != nil {
		return err
	}
	defer closeServing(a, log, "serve")
	accounts := a.Users
	var authn httpapi.Authenticator = accounts
	var authServers []string
	resource := ""
	if oc != nil {
		oc.Logger = log
		if verifier, err = oauth.New(*oc, accounts); err != nil {
			return err
		}
		authn = oauth.Either{Tokens: accounts, JWT: verifier}
		authServers, resource = []string{oc.Issuer}, oc.Audience
		log.Info("accepting OAuth access tokens", "issuer", oc.Issuer, "audience", oc.Audience)
	}
	if !httpapi.IsLoopbackAddr(*addr) && verifier == nil {
		// Beyond loopback every request needs a token: refuse to serve
		// when nobody could present one.
		ok, err := accounts.HasActiveToken(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("serve on %s needs authentication, and no user has a token: run \"nexus users add NAME\" "+
				"(with the same --data-dir or --db) and give clients the token it prints (Authorization: Bearer TOKEN), or accept an identity provider's tokens (--oauth-issuer)", *addr)
		}
	}
	cursorKey, err := a.Store.Secret(ctx, "trace-cursor")
	if err != nil {
		return err
	}
	api := rest.Handler(rest.Options{Registry: a.Registry, Pipeline: a.Pipeline, Store: a.Store, CursorKey: cursorKey, Version: app.Version,
		OpenAll: openAll(a), Logger: log})
	conf := a.Config
	if conf == nil {
		conf = &config.Config{}
	}
	// The transparent per-server endpoint: /mcp/servers/{toolbox}/{server}.
	px := proxy.New(conf, proxy.Options{Logger: log, Stderr: os.Stderr, Record: a.Pipeline.RecordPassthrough, Allow: func(r *http.Request, toolbox, server string) bool {
		return a.Access.Server(a.Pipeline.Principal(r.Context()), toolbox, server)
	}})
	defer px.Close()
	a.OnReload(px.SetConfig)
	go reloadOnHangup(ctx, a, log)
	// Closed on SIGTERM: /readyz turns 503, MCP GET streams end, and
	// WebSockets end once their turns have.
	draining := make(chan struct{})
	limit, err := tokenLimit(a.Store, *tokenRate, log)
	if err != nil {
		return err
	}
	turns, err := quota.NewTurnSlots(a.Store, quota.TurnOptions{Max: *maxTurns, Logger: log})
	if err != nil {
		return fmt.Errorf("--max-turns %d: %w", *maxTurns, err)
	}
	chatWS := ws.Handler(ws.Options{Chat: a.Chat, Auth: authn, Logger: log, Events: a.Events, Drain: draining,
		Owner: func(ctx context.Context, id string) (string, bool, error) {
			_, owner, ok, err := a.Conversations.Lookup(ctx, id)
			return owner, ok, err
		},
		RateLimit: limit, Turns: turns, IdleTimeout: *wsIdle, MaxPerUser: *wsPerUser})
	// A revoked token, a disabled user or a lost role reaches the open
	// WebSockets at once, on every replica.
	a.OnUsersChanged(chatWS.UsersChanged)
	h := httpapi.Handler(httpapi.Options{
		MCP: a.Surfaces.Flat, MCPCalls: a.Calls.Of(a.Surfaces.Flat), Agents: a.Surfaces.Agents, Bounded: a.Surfaces.Bounded,
		Routes:        map[string]http.Handler{"/api/": api, "/openapi.json": api, httpapi.WebSocketPath: chatWS},
		SessionRoutes: map[string]http.Handler{"/mcp/servers/": px},
		Loopback:      httpapi.IsLoopbackAddr(*addr), Health: a.Health, Ready: a.Ready, Drain: draining, Logger: log,
		Sessions: a.MCPSessions, Events: a.Events, Auth: authn, TokenLimit: limit,
		AuthorizationServers: authServers, Resource: resource, UI: webui.Handler(),
		AllowedHosts: hosts, AllowedOrigins: origins, MaxSessions: *maxSessions, MaxSessionsPerUser: *maxPerUser, Metrics: a.Metrics.Handler,
		Endpoints: append(rest.Endpoints(), httpapi.Endpoint{Path: "/mcp/servers/{toolbox}/{server}", Description: "MCP, one downstream server proxied unchanged"},
			httpapi.Endpoint{Path: httpapi.WebSocketPath, Description: "WebSocket chat: message, cancel, watch in; token, tool_start, tool_complete, complete, error out"},
			httpapi.Endpoint{Path: "/", Description: "the web UI, for a browser (Accept: text/html); this index otherwise"}),
	})
	// No ReadTimeout or WriteTimeout: they would cut SSE streams; the
	// handler bounds request bodies (httpapi.DefaultBodyTimeout).
	hs := &http.Server{Handler: h, ReadHeaderTimeout: httpapi.ReadHeaderTimeout, IdleTimeout: httpapi.IdleTimeout, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	local, downstream, servers := toolCounts(a)
	log.Info("nexus serving", "ui", "http://"+ln.Addr().String()+"/", "mcp", "http://"+ln.Addr().String()+"/mcp", "store", a.Store.Dialect(),
		"tools", local+downstream, "local_tools", local, "downstream_servers", servers, "downstream_tools", downstream,
		"trace_retention", app.FormatRetention(keep))
	if servers > 0 && downstream == 0 {
		log.Info("downstream servers connect when a client connects or opens their toolbox (eager ones at start); each logs its tools as it connects",
			"downstream_servers", servers)
	}
	go a.ScheduleMaintenance(ctx, keep, app.MaintenanceInterval)
	if !httpapi.IsLoopbackAddr(*addr) {
		log.Info("listening beyond loopback: every request needs a user's token", "addr", *addr)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain: not ready, then no new connections; calls in flight finish
	// within the drain timeout.
	close(draining)
	log.Info("draining", "delay", *drainDelay, "timeout", *drainTimeout)
	time.Sleep(*drainDelay)
	px.Close() // ends proxied streams, which would hold Shutdown
	sctx, cancel := context.WithTimeout(context.Background(), *drainTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("drain: calls still in flight when the drain timeout passed", "err", err)
	}
	// WebSockets are hijacked: Shutdown does not wait for them.
	if err := chatWS.Wait(sctx); err != nil {
		log.Warn("drain: chat turns still running when the drain timeout passed", "err", err)
	}
	return nil
}

// toolCounts counts the tools the flat surface lists: local ones, and
// those of downstream servers connected so far; and the downstream servers
// configured, whose tools come on top once they connect.
func toolCounts(a *app.App) (local, downstream, servers int) {
	for _, t := range a.Registry.Listed(registry.Tools) {
		if t.Source == registry.Local {
			local++
		} else {
			downstream++
		}
	}
	if a.Workbench != nil {
		for _, tb := range a.Workbench.Toolboxes() {
			servers += len(tb.Servers)
		}
	}
	return local, downstream, servers
}

// DefaultDrainTimeout is how long "nexus serve" lets calls in flight
// finish after SIGTERM (--drain-timeout).
const DefaultDrainTimeout = 15 * time.Second

// envDuration is the duration in environment variable k, or def when it is
// unset; a value that is not a duration becomes -1, which the command's
// checks refuse.
func envDuration(k string, def time.Duration) time.Duration {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return -1
	}
	return d
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func cmdStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("stdio", "nexus stdio [--surface flat|agents|bounded] [--config FILE] [--data-dir DIR] [--db URL]", stdout, stderr)
	var c common
	c.register(fs)
	surface := fs.String("surface", envOr("NEXUS_SURFACE", "flat"), "MCP surface: flat (every tool by name), agents (one tool per agent with a mode) or bounded (get_tools, open_toolbox, search_tools, use_tool) (env NEXUS_SURFACE)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *surface != "flat" && *surface != "agents" && *surface != "bounded" {
		return fmt.Errorf("--surface: %q is not one of flat, agents, bounded", *surface)
	}
	if err := checkDB(c.db); err != nil {
		return err
	}
	a, log, err := c.openServing(ctx, stderr, "stdio")
	if err != nil {
		return err
	}
	defer closeServing(a, log, "stdio")
	if c.config != "" {
		// Without a file, SIGHUP keeps its default: a hung-up terminal
		// ends the process.
		go reloadOnHangup(ctx, a, log)
	}
	srv := a.Surfaces.Flat
	switch *surface {
	case "agents":
		srv = a.Surfaces.Agents
	case "bounded":
		srv = a.Surfaces.Bounded
	}
	// Malformed messages are answered, not fatal; only one over the limit ends the connection.
	t := &stdio.Transport{Reader: stdin, Writer: stdout, MaxMessage: MaxStdioMessage, Logger: log}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func cmdTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		args = []string{"list", "--help"}
	}
	if len(args) == 0 || args[0] != "list" {
		fmt.Fprintln(stderr, `Usage: nexus tools list [--json] [--config FILE]; "nexus tools list --help" lists the flags`)
		return exitError{2}
	}
	fs := newFlagSet("tools list", "nexus tools list [--json] [--config FILE]  (reads no database)", stdout, stderr)
	var c common
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the tools with their full input schemas as JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	a, done, err := c.openForListing(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	if a.Workbench != nil {
		a.Workbench.OpenAll(ctx)
	}
	// The tools the flat surface (/mcp, "nexus stdio") serves: the bounded
	// surface's meta-tools are listed by that surface only.
	tools := a.Registry.Listed(registry.Tools)
	if *asJSON {
		type entry struct {
			Name        string         `json:"name"`
			Toolbox     string         `json:"toolbox"`
			Server      string         `json:"server"`
			Tool        string         `json:"tool"`
			Source      string         `json:"source"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		}
		out := make([]entry, 0, len(tools))
		for _, t := range tools {
			out = append(out, entry{t.Name(), t.ID.Toolbox, t.ID.Server, t.ID.Tool, string(t.Source), t.Description, t.ListedSchema()})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVER\tSOURCE\tDESCRIPTION")
	for _, t := range tools {
		desc, _, _ := strings.Cut(t.Description, ". ")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name(), t.ID.Server, t.Source, desc)
	}
	return tw.Flush()
}

func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("call", "nexus call TOOL [JSON | --args JSON] [--as USER] [--config FILE] [--data-dir DIR] [--db URL|PATH]", stdout, stderr)
	var c common
	c.register(fs)
	argsJSON := fs.String("args", "{}", "the tool's arguments as a JSON object (\"-\" reads them from standard input)")
	as := fs.String("as", "", "call as this user (by name), with their access, workspaces and quota; default: the local admin")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	tool, arguments, err := callTarget(fs, pos, *argsJSON, stderr)
	if err != nil {
		return err
	}
	if err := checkDB(c.db); err != nil {
		return err
	}
	raw := []byte(arguments)
	if arguments == "-" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 16<<20))
		if err != nil {
			return fmt.Errorf("read arguments: %w", err)
		}
		raw = b
	}
	a, _, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if *as != "" {
		u, err := a.Users.Get(ctx, *as)
		if err != nil {
			return fmt.Errorf("--as %s: %w", *as, err)
		}
		if u.Disabled {
			return fmt.Errorf("--as %s: the user is disabled", *as)
		}
		ctx = users.WithUser(ctx, u)
	}
	// A downstream tool's toolbox opens on the call (pipeline.Options.Resolve).
	o := a.Pipeline.Call(ctx, pipeline.Request{Tool: tool, Args: raw, Surface: "cli"})
	fmt.Fprintln(stdout, string(callOutput(o)))
	if callFailed(o) {
		hintUnknownTool(stderr, a, tool, o)
		return exitError{1}
	}
	return nil
}

// DefaultTokenRate is how many requests a second each user's token may make
// by default.
const DefaultTokenRate = 20

// tokenLimit is the per-user request limiter of a rate (nil: no limit),
// kept in the store so that the limit holds across replicas sharing the
// database (quota.SharedLimiter: one round trip to the store per
// authenticated request, and none when the rate is 0).
func tokenLimit(st *store.Store, rate float64, log *slog.Logger) (httpapi.RateLimiter, error) {
	if rate <= 0 {
		return nil, nil
	}
	l, err := quota.NewSharedLimiter(st, quota.SharedOptions{
		LimiterOptions: quota.LimiterOptions{Rate: rate, Burst: max(10, int(2*rate))}, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--token-rate %v: %w", rate, err)
	}
	return l, nil
}

// envFloat is the number in environment variable k, or def when it is
// unset; a value that is not a number becomes -1, which the command's checks
// refuse.
func envFloat(k string, def float64) float64 {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return -1
	}
	return f
}
