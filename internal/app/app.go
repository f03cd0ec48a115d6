// Package app wires Nexus together: store, registry, local servers, trace
// writer and pipeline. Every command of the binary opens one [App].
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access"
	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/agents"
	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/demo"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/metrics"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/secrets"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/streamable"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/telemetry"
	"github.com/nexus-mcp/nexus/internal/trace"
	"github.com/nexus-mcp/nexus/internal/tutor"
	"github.com/nexus-mcp/nexus/internal/users"
	"github.com/nexus-mcp/nexus/internal/vault"
	"github.com/nexus-mcp/nexus/internal/vkb"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// Version is the version Nexus reports at initialize and in /healthz.
const Version = "0.1.0"

// Config says where the data lives.
type Config struct {
	// DataDir holds the SQLite database; empty means [DefaultDataDir].
	DataDir string
	// DBURL is a postgres:// URL; empty means SQLite in DataDir.
	DBURL string
	// ConfigPath names a configuration file of toolboxes (Nexus, Workbench
	// or desktop-client format); empty means no downstream servers.
	ConfigPath string
	// Vault is a folder of notes served by the vault agents besides the
	// configuration's vaults (nexus --vault), named after the folder.
	Vault string
	// Demo loads the demo knowledge base into a newly created database.
	Demo bool
	// Transport names the MCP transport the surfaces serve ("http",
	// "stdio"), for the surface names in traces; empty means none is served.
	Transport string
	Logger    *slog.Logger
	// Events names the engine of events between replicas: "" for
	// PostgreSQL LISTEN/NOTIFY with a PostgreSQL store and in-process events
	// otherwise, or a nats:// URL (see events.Options.URL).
	Events string
	// Model is the server's language model for the chat and
	// tn_session_ask (nil: none configured; users may bring their own).
	Model llm.Provider
	// Embeddings is the server's embedding model, which makes searches
	// hybrid (nil: the configuration file's embeddings section, else none:
	// searches are lexical).
	Embeddings embed.Embedder
}

// Surfaces are the MCP surfaces of an App, built in one place
// ([App.buildSurfaces]), each by its package's New(p, mcpkit.Options): one
// server for any number of sessions over any transport.
type Surfaces struct {
	// Flat lists every tool under its own name (/mcp).
	Flat *mcp.Server
	// Agents lists one tool per agent, with a mode (/mcp/agents).
	Agents *mcp.Server
	// Bounded lists the meta-tools; each session lists what it discovers
	// (/mcp/bounded).
	Bounded *mcp.Server
}

// Intro is the first paragraph of every surface's initialize instructions:
// what Nexus is. Each surface adds how it serves tools and the toolboxes.
const Intro = "Nexus serves tools over MCP: its own servers (substrate: beliefs, entities and tensions of the knowledge base; " +
	"vkb: conversation sessions, exchanges, patterns and insights; tutor: tutoring sessions, the course catalog and transfer credit between BC institutions) " +
	"and the MCP servers of its toolboxes. " +
	"Every tool accepts an optional context {sessionId, workspaceId} and workspaceContext {workspaceId}."

// App is a running Nexus core.
type App struct {
	Store     *store.Store
	Registry  *registry.Registry
	Pipeline  *pipeline.Pipeline
	Traces    *trace.Writer
	Substrate *substrate.Server
	// Tutor is the tutor's server: its importers and session snapshots.
	Tutor *tutor.Server
	// Keyring seals users' model credentials (nil without one, see
	// loadKeyring); KeyringPath is its file, "" when it came from
	// NEXUS_KEYRING or there is none.
	Keyring     *secrets.Keyring
	KeyringPath string
	// Conversations is the one conversation model every surface shares.
	Conversations *conversation.Store
	// Catalog names agents and their modes for the agents and bounded surfaces.
	Catalog *mcpkit.Catalog
	// Surfaces are the MCP surfaces (the bounded surface's meta-tools live
	// in the registry).
	Surfaces Surfaces
	// Telemetry exports spans of tool calls when OTEL_* variables ask for it.
	Telemetry *telemetry.Provider
	// Metrics counts the pipeline's calls and reads the workbench and the
	// store's pool at scrape time; serve mounts it at GET /metrics.
	Metrics *metrics.Metrics
	// Access decides which tools and workspaces each user may use (the
	// pipeline's authorize step); nexus workspaces manages its workspaces.
	Access *access.Authorizer
	// Chat runs the bounded tool loop of the WebSocket chat and
	// tn_session_ask.
	Chat *chat.Chat
	// Config is the configuration loaded at start (nil without --config)
	// and Workbench its downstream servers, which follow the configuration
	// reloaded since ([App.ReloadConfig]).
	Config    *config.Config
	Workbench *workbench.Manager
	// Users are the users and their tokens; the HTTP front authenticates
	// with them, and their changes reach the other replicas' caches.
	Users *users.Users
	// MCPSessions keeps the MCP sessions over HTTP in the store, so that
	// any replica serves any session (serve gives it to the HTTP front).
	MCPSessions *mcpsession.Store
	// Events carries events between the replicas sharing the store.
	Events *events.Bus
	// Calls holds the tools/call the HTTP front serves without the SDK
	// server's dispatch (the flat surface's).
	Calls *mcpkit.Calls
	// Instance names this process among the replicas sharing a database
	// (in /healthz, /readyz and as the holder of the background jobs it
	// runs).
	Instance string
	log      *slog.Logger

	// configPath is the configuration file ("" without one); current is
	// the configuration in use, replaced by ReloadConfig under reloadMu.
	configPath string
	reloadMu   sync.Mutex
	current    *config.Config
	reloaded   []func(*config.Config)

	// Vectors are the embeddings of beliefs and exchanges (nil without an
	// embedding model): belief_query searches them, [App.StartEmbeddings]
	// runs their background job.
	Vectors *embed.Index
	// embedStop ends the embedding job, embedDone is closed when it has.
	embedStop context.CancelFunc
	embedDone chan struct{}

	// usersChanged are called after the users cache was forgotten
	// ([App.OnUsersChanged]).
	usersMu      sync.Mutex
	usersChanged []func()

	// closers stop what Open started; Close runs them.
	closers closers
	// bg runs the App's own goroutines ([App.background]) on bgCtx, which
	// bgStop cancels at Close; bgMu keeps a goroutine from starting once
	// Close has begun.
	bgMu   sync.Mutex
	bgCtx  context.Context
	bgStop context.CancelFunc
	bg     sync.WaitGroup
}

// Open opens the store, registers the local servers and builds the pipeline.
// Whatever it started is stopped again when a later step fails, and by
// [App.Close] otherwise.
func Open(ctx context.Context, cfg Config) (_ *App, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A bad configuration fails before anything else is opened.
	var conf *config.Config
	if cfg.ConfigPath != "" {
		if conf, err = config.Load(cfg.ConfigPath); err != nil {
			return nil, err
		}
	}
	if cfg.DataDir == "" && cfg.DBURL == "" {
		dir, err := DefaultDataDir()
		if err != nil {
			return nil, err
		}
		cfg.DataDir = dir
	}
	// From here on, each thing started adds its closer; a failure runs
	// them all, the App's Close otherwise.
	var c closers
	defer c.closeOnError(&err)
	tel, err := telemetry.Setup(ctx, Version, os.Getenv, os.Stderr)
	if err != nil {
		return nil, err
	}
	c.add("tracing", shutdownTelemetry(ctx, tel))
	st, err := store.Open(ctx, store.Options{URL: cfg.DBURL, DataDir: cfg.DataDir, Logger: log})
	if err != nil {
		return nil, err
	}
	c.add("store", st.Close)
	reg := registry.New()
	sub := substrate.New(st, log)
	c.addFunc("substrate", sub.Close) // before the store
	vectors, err := openVectors(st, cfg.Embeddings, conf, log)
	if err != nil {
		return nil, err
	}
	if vectors != nil {
		sub.UseVectors(vectors)
	}
	if err := sub.Register(reg); err != nil {
		return nil, err
	}
	conv := conversation.New(st)
	if vectors != nil {
		conv.UseVectors(vectors)
	}
	if err := vkb.New(st, conv, sub, log).Register(reg); err != nil {
		return nil, err
	}
	tutorKey, err := st.Secret(ctx, "tutor-cursor")
	if err != nil {
		return nil, err
	}
	keys, keysPath, err := loadKeyring(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	// tn_session_ask runs the chat loop, built once the pipeline is.
	var loop *chat.Chat
	tutOpts := tutor.Options{CursorKey: tutorKey, Logger: log, Ask: func(ctx context.Context, id, message, system string, tools []string) (string, []string, error) {
		return askLoop(ctx, loop, id, message, system, tools)
	},
		Keyring: keys, AllowLoopbackModelURLs: os.Getenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS") == "1"}
	if conf != nil && conf.Chat != nil {
		tutOpts.ToolApproval = conf.Chat.ToolApproval
	}
	if keysPath != "" { // nexus keys rotate rewrites the file while Nexus runs
		tutOpts.ReloadKeyring = func() (*secrets.Keyring, error) { return secrets.Load(keysPath) }
	}
	tut := tutor.New(st, conv, tutOpts)
	if err := tut.Register(reg); err != nil {
		return nil, err
	}
	vaults, err := openVaults(conf, cfg.Vault, &c)
	if err != nil {
		return nil, err
	}
	notes := vault.NewServer(vaults, vault.Options{Store: st, Conversations: conv, Logger: log})
	if err := notes.Register(reg); err != nil {
		return nil, err
	}
	notes.Start()
	c.add("vault indexing", notes.Close)
	tw := trace.NewWriter(st, log)
	c.addFunc("trace writer", tw.Close) // flushes into the store
	a := &App{Store: st, Registry: reg, Substrate: sub, Tutor: tut, Keyring: keys, KeyringPath: keysPath, Conversations: conv, Traces: tw, Telemetry: tel, log: log,
		Instance: instanceName(), Users: users.New(st), configPath: cfg.ConfigPath, current: conf, Vectors: vectors}
	a.Metrics = metrics.New(metrics.Options{DB: st.DB(), Servers: a.downstreamServers, Logger: log})
	var rules config.Access
	if conf != nil {
		rules = conf.Access
	}
	a.Access = access.New(st, rules)
	notes.UseAccess(a.Access)
	a.MCPSessions = mcpsession.New(st, streamable.SessionTimeout)
	a.Pipeline = pipeline.New(pipeline.Options{Registry: reg, Traces: tw, Sessions: conv, Logger: log, Bindings: a.MCPSessions,
		Tracer: tel.Tracer("github.com/nexus-mcp/nexus/internal/pipeline"), Resolve: a.resolve, Observer: a.Metrics,
		Principal: caller, Authorizer: a.Access})
	promptQuotas, err := quota.New(st, quota.DefaultLimits())
	if err != nil {
		return nil, err
	}
	server := cfg.Model
	if server == nil && conf != nil && conf.Model != nil {
		// The configuration file's model (the environment's wins).
		m := conf.Model
		if server, err = llm.New(llm.Settings{Provider: m.Provider, BaseURL: m.BaseURL, APIKey: m.APIKey, Model: m.Model}, nil); err != nil {
			return nil, fmt.Errorf("%s: model: %w", conf.Path, err)
		}
	}
	judge, err := tensionJudge(conf, server)
	if err != nil {
		return nil, err
	}
	// One client (one connection pool) for every user's own model: it
	// refuses internal addresses at each connection.
	modelClient := tut.ModelHTTPClient(0)
	approval, approvalTimeout := toolApproval(conf, tut)
	a.Chat = chat.New(chat.Options{Pipeline: a.Pipeline, Conversations: conv, Quotas: promptQuotas, Logger: log,
		Approval: approval, ApprovalTimeout: approvalTimeout,
		Memory: []string{"exchange_search"}, // the chat and tn_session_ask recall past turns
		Model: func(ctx context.Context, who principal.Principal, choice string) (llm.Provider, bool, error) {
			// By default the user's own credentials first (not counted
			// against the quota), else the server's model.
			if choice == chat.ModelServer {
				return server, false, nil
			}
			own, err := tut.UserModel(ctx, who.ID, choice)
			if err != nil || own == nil && choice == "" {
				return server, false, err
			}
			if own == nil {
				return nil, false, errs.Invalid("model", "you have no model key %q: choose one of tn_user_byok_list's ids, or %q", choice, chat.ModelServer)
			}
			p, err := userProvider(own, modelClient, cfg.Model)
			return p, true, err
		}})
	loop = a.Chat
	if a.Events, err = events.Open(ctx, events.Options{URL: cfg.Events, Store: st, Origin: a.Instance, Logger: log}); err != nil {
		return nil, err
	}
	c.addFunc("event bus", a.Events.Close)
	a.MCPSessions.Follow(a.Events)
	a.Catalog = &mcpkit.Catalog{Registry: reg}
	if conf != nil {
		a.Config = conf
		a.Workbench = workbench.NewManager(conf, reg, workbench.Options{Logger: log, ClientName: "nexus", ClientVersion: Version, Store: st})
		c.add("downstream servers", a.Workbench.Close)
		a.Catalog.Toolboxes = a.Workbench
		a.Workbench.Start(ctx)
	}
	// The App's own goroutines (reloads the other replicas ask for) end
	// before the downstream servers close.
	a.bgCtx, a.bgStop = context.WithCancel(context.WithoutCancel(ctx))
	c.addFunc("background work", a.stopBackground)
	a.follow()
	// First at Close: the embedding job StartEmbeddings may start.
	c.addFunc("embedding job", a.stopEmbeddings)
	if err := a.buildSurfaces(cfg.Transport); err != nil {
		return nil, err
	}
	if cfg.Demo && st.Created {
		if err := demo.Load(ctx, sub, pipeline.DefaultWorkspace); err != nil {
			return nil, fmt.Errorf("load demo data: %w", err)
		}
		if _, err := tut.LoadDemo(ctx); err != nil {
			return nil, fmt.Errorf("load tutor demo data: %w", err)
		}
		log.Info("loaded demo knowledge base", "workspace", pipeline.DefaultWorkspace)
	}
	// After the demo data, which the rules alone judge.
	if judge != nil {
		sub.UseJudge(server, *judge)
		log.Info("tension judge: the chat model confirms the tensions the rules flag", "model", server.Name(),
			"timeout", judge.Timeout, "max_pairs", judge.MaxPairs)
	}
	a.closers = c
	return a, nil
}

// resolve lets a call of a configured toolbox's tool that is not registered
// yet wait for the toolbox's opening (see workbench.Manager.Resolve).
func (a *App) resolve(ctx context.Context, tool string) error {
	if a.Workbench == nil {
		return nil
	}
	return a.Workbench.Resolve(ctx, tool)
}

// downstreamServers is the state of the configured downstream servers, for
// the metrics at scrape time (none without a configuration).
func (a *App) downstreamServers() []metrics.Server {
	if a.Workbench == nil {
		return nil
	}
	states := a.Workbench.Servers()
	out := make([]metrics.Server, len(states))
	for i, s := range states {
		out[i] = metrics.Server{Toolbox: s.Toolbox, Server: s.Server, Up: s.Connected, Restarts: s.Restarts,
			BreakerOpen: s.Breaker != workbench.BreakerClosed, BreakerOpens: s.BreakerOpens, Retries: s.Retries}
	}
	return out
}

// Close stops everything Open started, in the reverse order: the embedding
// job, the App's own goroutines (cancelled, then waited for), the
// downstream servers, the event bus, the trace writer (flushed), the
// substrate's background work, the store and the telemetry provider
// (flushed). Failures are logged; a second Close does nothing.
func (a *App) Close() {
	if err := a.closers.close(); err != nil {
		a.log.Warn("close", "err", err)
	}
}

// Health describes this process for the liveness probe (/healthz): its
// version, store and the tools served: "tools" counts what the flat surface
// (/mcp, "nexus tools list") lists; the bounded surface lists its
// meta-tools instead. It does not reach the store: a replica whose database
// is down is alive, just not ready (see [App.Ready]).
func (a *App) Health(ctx context.Context) map[string]any {
	flat, meta := len(a.Registry.Listed(registry.Tools)), len(a.Registry.Listed(registry.MetaTools))
	agents := 0
	for _, ag := range a.Catalog.Agents() {
		if len(a.Catalog.Modes(ag)) > 0 {
			agents++
		}
	}
	return map[string]any{"status": "ok", "version": Version, "store": string(a.Store.Dialect()), "tools": flat,
		"instance": a.Instance, "surfaces": map[string]int{"flat": flat, "agents": agents, "bounded": meta}}
}

// Ready reports whether this replica can serve requests, for the readiness
// probe (/readyz): the store and the event bus answer within two seconds.
func (a *App) Ready(ctx context.Context) map[string]any {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	r := map[string]any{"status": "ok", "instance": a.Instance, "store": "ok", "events": a.Events.Engine()}
	if err := a.Store.DB().PingContext(ctx); err != nil {
		r["status"] = "unavailable"
		r["store"] = err.Error()
	}
	if err := a.Events.Ready(ctx); err != nil {
		r["status"] = "unavailable"
		r["events"] = a.Events.Engine() + ": " + err.Error()
	}
	// Downstream servers whose circuit breaker refuses calls: a detail,
	// not unreadiness (every replica reaches the same servers, so taking
	// this one out of the balancer would help no one).
	if a.Workbench != nil {
		var open []string
		retries := map[string]uint64{}
		for _, s := range a.Workbench.Servers() {
			if s.Breaker != workbench.BreakerClosed {
				open = append(open, s.Toolbox+"/"+s.Server)
			}
			if s.Retries > 0 {
				retries[s.Toolbox+"/"+s.Server] = s.Retries
			}
		}
		if len(open) > 0 {
			r["downstream_breakers_open"] = open
		}
		if len(retries) > 0 {
			r["downstream_retries"] = retries
		}
	}
	return r
}

// loadKeyring returns the keyring that seals users' model credentials: the
// NEXUS_KEYRING environment variable when set (replicas share it), else
// keyring.json in the data directory (created on first run, mode 0600).
// With neither (PostgreSQL without a data directory) there is none and the
// BYOK tools say to set NEXUS_KEYRING; Nexus still starts.
func loadKeyring(dataDir string) (*secrets.Keyring, string, error) {
	if v := os.Getenv("NEXUS_KEYRING"); v != "" {
		k, err := secrets.FromEnv(v)
		if err != nil {
			return nil, "", fmt.Errorf("NEXUS_KEYRING: %w", err)
		}
		return k, "", nil
	}
	if dataDir == "" {
		return nil, "", nil
	}
	path := filepath.Join(dataDir, "keyring.json")
	k, err := secrets.LoadOrCreate(path)
	if err != nil {
		return nil, "", err
	}
	return k, path, nil
}

// DefaultDataDir is the user's data directory for Nexus: $XDG_DATA_HOME/nexus
// or ~/.local/share/nexus on Linux, ~/Library/Application Support/nexus on
// macOS, %LocalAppData%\nexus on Windows.
func DefaultDataDir() (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "nexus"), nil
		}
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("data directory: %w", err)
		}
		return filepath.Join(home, "Library", "Application Support", "nexus"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "nexus"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("data directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "nexus"), nil
}

// buildSurfaces builds the MCP surfaces, all in this one place; their names
// in traces are "mcp-<surface>-<transport>" ("mcp-<surface>" without one).
func (a *App) buildSurfaces(transport string) error {
	a.Calls = &mcpkit.Calls{}
	opts := func(surface string) mcpkit.Options {
		name := "mcp-" + surface
		if transport != "" {
			name += "-" + transport
		}
		o := mcpkit.Options{Name: "nexus", Version: Version, Surface: name, Instructions: Intro, Catalog: a.Catalog, Logger: a.log,
			Sessions: a.MCPSessions, Calls: a.Calls}
		if a.Vectors != nil {
			o.Embedder = a.Vectors.Embedder()
		}
		return o
	}
	// Bounded first: it registers its meta-tools, which the others, which
	// follow the registry, would otherwise each sync again.
	var err error
	if a.Surfaces.Bounded, err = bounded.New(a.Pipeline, opts("bounded")); err != nil {
		return fmt.Errorf("bounded surface: %w", err)
	}
	if a.Surfaces.Flat, err = flat.New(a.Pipeline, opts("flat")); err != nil {
		return fmt.Errorf("flat surface: %w", err)
	}
	if a.Surfaces.Agents, err = agents.New(a.Pipeline, opts("agents")); err != nil {
		return fmt.Errorf("agents surface: %w", err)
	}
	return nil
}

// userProvider is the model of a user's credential, reached through client
// (which refuses internal addresses). An ollama credential speaks the
// OpenAI-compatible API at its base URL; its model is the server's model
// name when there is one, else llama3.1.
func userProvider(c *tutor.ModelCredential, client *http.Client, server llm.Provider) (llm.Provider, error) {
	model := modelOf(server)
	switch c.Provider {
	case "anthropic":
		if model == "" || !strings.HasPrefix(model, "claude") {
			model = "claude-sonnet-4-5"
		}
		return llm.NewAnthropic(llm.AnthropicOptions{BaseURL: c.BaseURL, APIKey: string(c.Key), Model: model, HTTPClient: client})
	case "ollama":
		if model == "" {
			model = "llama3.1"
		}
		base := strings.TrimSuffix(c.BaseURL, "/")
		if !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
		return llm.NewOpenAI(llm.OpenAIOptions{BaseURL: base, Model: model, HTTPClient: client})
	default:
		if model == "" || strings.HasPrefix(model, "claude") {
			model = "gpt-4o-mini"
		}
		return llm.NewOpenAI(llm.OpenAIOptions{BaseURL: c.BaseURL, APIKey: string(c.Key), Model: model, HTTPClient: client})
	}
}

// modelOf is the model name of the server's provider ("" without one).
func modelOf(p llm.Provider) string {
	if p == nil {
		return ""
	}
	_, model, _ := strings.Cut(p.Name(), " ")
	return model
}

// askLoop answers a tutoring session's message with the chat loop
// (tn_session_ask): the answer and the events it emitted, as ADR-012's
// eventsEmitted names them.
func askLoop(ctx context.Context, loop *chat.Chat, id, message, system string, tools []string) (string, []string, error) {
	events := []string{"message.received"}
	res, err := loop.Run(ctx, chat.Turn{ConversationID: id, Content: message, System: system, Tools: tools, Platform: tutor.Platform}, func(e chat.Event) {
		if e.Type == chat.ToolComplete {
			events = append(events, "tool.called:"+e.ToolName)
		}
	})
	if err != nil {
		return "", nil, err
	}
	return res.Text, append(events, "message.answered"), nil
}

// caller is who a call acts as: the user the HTTP front authenticated,
// if any (else the pipeline's local user).
func caller(ctx context.Context) (principal.Principal, bool) {
	u, ok := users.FromContext(ctx)
	if !ok {
		return principal.Principal{}, false
	}
	return u.Principal(), true
}
