// Command nexus is the Nexus MCP tool hub.
//
//	nexus serve [--addr HOST:PORT] ...       MCP over Streamable HTTP at /mcp, REST, OpenAPI
//	nexus stdio [--surface NAME] ...         MCP over stdin/stdout
//	nexus tools list [--json] ...            the tools Nexus serves
//	nexus call TOOL [JSON | --args JSON] ... one call through the pipeline
//	nexus import KIND FILE... ...            import tutor data (catalogues, transfer rules)
//
// "nexus --help" lists every flag and environment variable.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries a process exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

const usage = `Nexus: one MCP endpoint for your tools.

Usage:
  nexus serve [--addr HOST:PORT] [--allow-hosts HOSTS] [--allow-origins ORIGINS] [common flags]
        MCP over Streamable HTTP at /mcp (also /mcp/agents, /mcp/bounded), REST at /api
  nexus stdio [--surface flat|agents|bounded] [common flags]
        MCP over standard input and output; logs go to standard error
  nexus tools list [--json] [--config FILE]
        the tools Nexus serves (reads no database)
  nexus call TOOL [JSON | --args JSON] [common flags]
        one call through the pipeline; JSON is the tool's arguments, one object
  nexus maintenance [--trace-retention 30d] [common flags]
        delete call traces older than the retention (serve does it every hour)
  nexus import KIND FILE... [--workspace WS] [common flags]
        import tutor data: bctg-transfers, langara-catalogue, langara-attributes,
        langara-sections, sfu-outlines, tutor-session, tutor-materials,
        tutor-grades, or auto (the kind each file
        holds); idempotent, one transaction per file; "nexus import --help" says more
  nexus users add|list|set ...   /   nexus tokens add|list|revoke ...
        users (name, tier, role) and their API tokens, shown once when made and
        stored only as hashes; HTTP requests authenticate with them
  nexus workspaces list|add-member|remove-member|set-owner ...
        who, besides admins, may act in a workspace: its owner and members
  nexus embeddings status|backfill [common flags]
        hybrid search's vectors: how many beliefs and exchanges have one of the
        embedding model's; backfill embeds the rest now (serve and stdio do it
        in the background)
  nexus keys rotate [common flags]   new key for users' model credentials; rewraps them
  nexus reload [--db URL]   every replica on the database (or NATS) reads its --config
        file again, as SIGHUP to one of them does
  nexus version

Common flags:
  --config FILE          toolboxes of downstream MCP servers and vaults: Nexus YAML, MCP
                         Workbench or desktop-client (mcpServers) format; env NEXUS_CONFIG;
                         serve and stdio read it again on SIGHUP (and tell the replicas)
  --data-dir DIR         where the SQLite database nexus.db lives (default: the user's
                         data directory, e.g. ~/.local/share/nexus); env NEXUS_DATA_DIR
  --db URL|PATH          a postgres:// or postgresql:// URL for PostgreSQL, or a SQLite
                         file path (or sqlite:PATH); default: nexus.db in the data
                         directory; env NEXUS_DB
  --log-level LEVEL      debug, info, warn or error (default info for serve and stdio,
                         warn for the other commands); env NEXUS_LOG_LEVEL
  --no-demo              do not load the demo knowledge base into a new database
  --vault DIR            a folder of Markdown notes served by the vault agents, named
                         after the folder, besides the configuration's vaults
                         (docs/vault.md); env NEXUS_VAULT

serve:
  --addr HOST:PORT       listen address (default 127.0.0.1:7777); env NEXUS_ADDR
  --allow-hosts HOSTS    comma-separated host names clients use to reach Nexus, besides
                         loopback ones; required beyond loopback; env NEXUS_ALLOW_HOSTS
  --allow-origins ORIGINS
                         comma-separated origins whose web pages may call Nexus, e.g.
                         https://app.example.com; env NEXUS_ALLOW_ORIGINS
  --token-rate N         requests a second each user's token may make (default 20;
                         bursts of twice that), counted in the store across replicas;
                         0 for no limit; env NEXUS_TOKEN_RATE
  --max-sessions N       live MCP sessions over HTTP on this replica, at most (default
                         10000); the one idle the longest is closed to make room; env
                         NEXUS_MAX_SESSIONS
  --max-sessions-per-user N
                         each user's share of those (default: a tenth, at least 10 but
                         at most half); past it their own idle session is closed, or
                         429 when each is busy; anonymous-tier users share one share,
                         the local user has the whole cap; env NEXUS_MAX_SESSIONS_PER_USER
  --max-turns N          chat turns one user may run at once, over all their WebSockets
                         on every replica (default 2); env NEXUS_MAX_TURNS
  --ws-idle-timeout D    a chat WebSocket idle this long is closed (default 5m); env
                         NEXUS_WS_IDLE_TIMEOUT
  --ws-max-per-user N    chat WebSockets one user may hold open on a replica (default
                         16); env NEXUS_WS_MAX_PER_USER
  --trace-retention AGE  how long call traces are kept: 30d (default), 720h, or 0 to keep
                         them all; also for maintenance; env NEXUS_TRACE_RETENTION
  --events URL           events between replicas: nats://HOST:PORT[/PREFIX] for NATS;
                         default PostgreSQL LISTEN/NOTIFY with a PostgreSQL --db (in
                         process otherwise); env NEXUS_EVENTS
  --drain-delay D        on SIGTERM, how long /readyz answers 503 before the listener
                         closes, for a load balancer to notice (default 0); env
                         NEXUS_DRAIN_DELAY
  --drain-timeout D      on SIGTERM, how long calls in flight may take to finish (default
                         15s); env NEXUS_DRAIN_TIMEOUT
  --oauth-issuer URL     also accept this identity provider's JWT access tokens; env
                         NEXUS_OAUTH_ISSUER (with --oauth-audience URL, this server's
                         resource URL; env NEXUS_OAUTH_AUDIENCE)
  --oauth-jwks-url URL   the issuer's keys (default: from its metadata); env
                         NEXUS_OAUTH_JWKS_URL
  --oauth-user-claim CLAIM  the claim naming the user (default sub); env
                         NEXUS_OAUTH_USER_CLAIM
  --oauth-role-claim CLAIM, --oauth-admin-values VALUES
                         a claim whose values make an admin; env NEXUS_OAUTH_ROLE_CLAIM,
                         NEXUS_OAUTH_ADMIN_VALUES
  --oauth-tier-claim CLAIM, --oauth-tiers TIER=VALUE,...
                         a claim whose values set the tier; env NEXUS_OAUTH_TIER_CLAIM,
                         NEXUS_OAUTH_TIERS
stdio:
  --surface NAME         flat (every tool by name), agents (one tool per server, with a
                         mode) or bounded (get_tools, search_tools, use_tool...); default
                         flat; env NEXUS_SURFACE
tools list:
  --json                 the tools with their full input schemas, as JSON
call:
  --args JSON            the tool's arguments (default {}); "-" reads them from standard
                         input
  --as USER              call as this user, with their access and workspaces (default:
                         the local admin)

Environment (no flags):
  NEXUS_LLM_PROVIDER     the server's language model, for the chat and tn_session_ask:
                         openai (or any OpenAI-compatible server) or anthropic; none
                         by default (users may bring their own)
  NEXUS_LLM_MODEL        the model, e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1
  NEXUS_LLM_API_KEY      the provider's key (not needed by Ollama)
  NEXUS_LLM_BASE_URL     the API's base URL, e.g. http://127.0.0.1:11434/v1 for Ollama
  NEXUS_EMBEDDINGS_PROVIDER, NEXUS_EMBEDDINGS_MODEL
                         the server's embedding model, for hybrid search: openai (or any
                         OpenAI-compatible /v1/embeddings) or ollama (/api/embed), and
                         the model, e.g. text-embedding-3-small, nomic-embed-text; none
                         by default (searches are lexical)
  NEXUS_EMBEDDINGS_API_KEY, NEXUS_EMBEDDINGS_BASE_URL, NEXUS_EMBEDDINGS_DIMS
                         its key, base URL (e.g. http://127.0.0.1:11434 for Ollama) and
                         vector length (asked of the model and checked)
  NEXUS_KEYRING          the keyring sealing users' model credentials, in keyring.json's
                         format (default: keyring.json in the data directory, created on
                         first run); replicas on one PostgreSQL database share it
  NEXUS_ALLOW_LOOPBACK_MODEL_URLS=1
                         let users' model base URLs name loopback hosts (http too), e.g.
                         a local Ollama; refused otherwise
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER=console
                         export every call as an OpenTelemetry span

A flag also works with one dash, and as --flag=value. "nexus COMMAND --help" prints one
command's flags.
`

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		err = cmdServe(ctx, rest, stdout, stderr)
	case "stdio":
		err = cmdStdio(ctx, rest, stdin, stdout, stderr)
	case "tools":
		err = cmdTools(ctx, rest, stdout, stderr)
	case "maintenance":
		err = cmdMaintenance(ctx, rest, stdout, stderr)
	case "call":
		err = cmdCall(ctx, rest, stdout, stderr)
	case "import":
		err = cmdImport(ctx, rest, stdout, stderr)
	case "users":
		err = cmdUsers(ctx, rest, stdout, stderr)
	case "tokens":
		err = cmdTokens(ctx, rest, stdout, stderr)
	case "workspaces":
		err = cmdWorkspaces(ctx, rest, stdout, stderr)
	case "keys":
		err = cmdKeys(ctx, rest, stdout, stderr)
	case "embeddings":
		err = cmdEmbeddings(ctx, rest, stdout, stderr)
	case "reload":
		err = cmdReload(ctx, rest, stdout, stderr)
	case "version", "--version":
		if len(rest) > 0 && isHelp(rest[0]) {
			fmt.Fprintln(stdout, "Usage: nexus version\n\nPrints the version of this nexus binary.")
			break
		}
		fmt.Fprintln(stdout, "nexus", versionString())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "nexus: unknown command %q\nRun \"nexus --help\" for the commands.\n", cmd)
		return 2
	}
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintln(stderr, "nexus:", err)
		return 1
	}
}
