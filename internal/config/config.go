// Package config reads Nexus's configuration: the Nexus format (YAML), the
// MCP Workbench format (seed 003: toolboxes of downstream MCP servers) and
// the desktop-client format ({"mcpServers": {...}}, one toolbox "default"),
// with ${VAR} and ${VAR:-default} expansion. An invalid file fails with the
// file, the path inside it and the reason.
package config

import "time"

// Config is a loaded configuration.
type Config struct {
	// Path is the file it was read from.
	Path string
	// Toolboxes by name, in file order in Order.
	Toolboxes map[string]*Toolbox
	Order     []string
	// Access says who may use which toolboxes and tools (the Nexus format's
	// access section); empty: everyone may use every tool.
	Access Access
	// Model is the server's language model (the Nexus format's model
	// section); nil: none configured here.
	Model *Model
	// Embeddings is the server's embedding model (the Nexus format's
	// embeddings section); nil: none, searches are lexical.
	Embeddings *Embeddings
	// Tensions configures tension detection (the Nexus format's tensions
	// section); nil: the defaults, the deterministic rules alone.
	Tensions *Tensions
	// Chat configures the WebSocket chat (the Nexus format's chat section:
	// tool approval); nil: the defaults, no approval asked.
	Chat *Chat
	// Vaults are the folders of notes the vault agents serve (the Nexus
	// format's vaults section), in file order: the first is the default.
	Vaults []*Vault
	// Naming is how downstream tools and prompts are named on the
	// surfaces, for toolboxes that do not say: NamingPrefixed (the
	// default) or NamingPlain.
	Naming string
}

// How downstream tools and prompts are named on the surfaces.
const (
	// NamingPrefixed names them toolbox__server__name.
	NamingPrefixed = "prefixed"
	// NamingPlain keeps their own names; two that would have the same
	// name on a surface are a collision, which serves the first and
	// reports the other.
	NamingPlain = "plain"
)

// Model names the server's language model for the chat and
// tn_session_ask.
type Model struct {
	// Provider is openai (or any OpenAI-compatible server) or anthropic.
	Provider string
	// BaseURL is the API's base (empty: the provider's); APIKey its key,
	// usually ${VAR}; Model the model's name.
	BaseURL, APIKey, Model string
}

// Toolbox is a named group of downstream MCP servers.
type Toolbox struct {
	Name        string
	Description string
	// Naming is how its tools and prompts are named (NamingPrefixed or
	// NamingPlain; empty: the file's Naming, else prefixed).
	Naming string
	// Servers by name, in file order in Order.
	Servers map[string]*Server
	Order   []string
}

// Transport kinds of downstream servers.
const (
	Stdio          = "stdio"
	StreamableHTTP = "streamable-http"
	SSE            = "sse"
)

// Server is one downstream MCP server.
type Server struct {
	Name string
	// Description says what the server is for; tool search weighs it
	// with its tools (issue 27).
	Description string
	// Transport is Stdio, StreamableHTTP or SSE; inferred when the file
	// gives none (command: stdio; url: streamable-http).
	Transport string
	// Command, Args, Env and Cwd start a stdio server.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// URL and Headers reach an HTTP server.
	URL     string
	Headers map[string]string
	// ToolFilters select the tools served: exact names or globs ("get_*");
	// a leading "!" excludes. Empty serves every tool.
	ToolFilters []string
	// Eager connects at start instead of when the toolbox is first opened.
	Eager bool
	// MaxIdleConnections is how many keep-alive connections to an HTTP
	// server are kept idle for the next requests (default
	// DefaultMaxIdleConnections).
	MaxIdleConnections int
	// Timeout bounds one tool call (default 60 s).
	Timeout time.Duration
	// ConnectTimeout bounds connecting and listing tools (default 30 s).
	ConnectTimeout time.Duration
	// BreakerFailures is how many calls in a row must fail for the
	// server's circuit breaker to open, and BreakerCooldown how long it
	// stays open before a probe call (0: the workbench's defaults, 5 and
	// 30 s).
	BreakerFailures int
	BreakerCooldown time.Duration
	// Plain is set by the loader when the server's toolbox names its tools
	// and prompts plainly (NamingPlain): they keep their own names.
	Plain bool
	// Retries is how many times a call that is safe to repeat (a tool
	// annotated readOnlyHint or idempotentHint) is tried again after the
	// server failed it, within the server's retry budget (nil: the
	// workbench's default, 2; 0: never).
	Retries *int
}

// CallTimeout is Timeout, or DefaultTimeout when it is not set (a Server
// made in code rather than loaded).
func (s *Server) CallTimeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// DialTimeout is ConnectTimeout, or DefaultConnectTimeout when it is not set.
func (s *Server) DialTimeout() time.Duration {
	if s.ConnectTimeout > 0 {
		return s.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// TransportKind is Transport, or, when it is not set (a Server made in code),
// what the loader would infer: Stdio for a command, StreamableHTTP for a URL.
func (s *Server) TransportKind() string {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.Command != "":
		return Stdio
	case s.URL != "":
		return StreamableHTTP
	}
	return ""
}
