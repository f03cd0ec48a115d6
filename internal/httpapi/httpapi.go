// Package httpapi is Nexus's HTTP front: the MCP surfaces over Streamable
// HTTP (/mcp flat, /mcp/agents, /mcp/bounded), GET /healthz and whatever
// other routes the caller mounts (REST, the per-server proxy), all behind one
// guard that validates Host and Origin against DNS rebinding and bounds
// request bodies.
package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBodyBytes bounds every request body (1 MiB); a larger body gets
// 413 and is not read.
const DefaultMaxBodyBytes = 1 << 20

// Options configure the handler.
type Options struct {
	// MCP is the flat surface's server, behind /mcp.
	MCP *mcp.Server
	// Agents is the agents surface's server, behind /mcp/agents (optional).
	Agents *mcp.Server
	// Bounded returns the bounded surface's server for a request, behind
	// /mcp/bounded (optional; called per new session).
	Bounded func(*http.Request) *mcp.Server
	// Routes are further handlers by ServeMux pattern (optional).
	Routes map[string]http.Handler
	// Loopback is true when the listener is bound to a loopback address; then
	// only loopback Host headers (and AllowedHosts) are accepted.
	Loopback bool
	// AllowedHosts and AllowedOrigins extend what the guard accepts
	// (host names, and origins such as "https://app.example.com").
	AllowedHosts   []string
	AllowedOrigins []string
	// MaxBodyBytes bounds request bodies; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Health reports readiness for /healthz; nil means always healthy.
	Health func(ctx context.Context) map[string]any
	Logger *slog.Logger
}

// Handler returns the HTTP handler of Nexus.
func Handler(o Options) http.Handler {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	streamable := func(get func(*http.Request) *mcp.Server) http.Handler {
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Logger:              o.Logger,
			MaxRequestBodyBytes: o.MaxBodyBytes,
			SessionTimeout:      30 * time.Minute,
			// The guard below already enforces Host for every route.
			DisableLocalhostProtection: !o.Loopback,
		})
	}
	mux.Handle("/mcp", streamable(func(*http.Request) *mcp.Server { return o.MCP }))
	if o.Agents != nil {
		mux.Handle("/mcp/agents", streamable(func(*http.Request) *mcp.Server { return o.Agents }))
	}
	if o.Bounded != nil {
		mux.Handle("/mcp/bounded", streamable(o.Bounded))
	}
	for pattern, h := range o.Routes {
		mux.Handle(pattern, h)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"status": "ok"}
		if o.Health != nil {
			body = o.Health(r.Context())
		}
		status := http.StatusOK
		if body["status"] != "ok" {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, body)
	})
	return guard(o, mux)
}

// guard rejects requests whose Host or Origin fail validation (DNS
// rebinding protection) and bounds request bodies.
func guard(o Options, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.Loopback && !isLoopbackHost(hostOnly(r.Host)) && !slices.Contains(o.AllowedHosts, hostOnly(r.Host)) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(o, r, origin) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Origin header %q", origin), http.StatusForbidden)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, o.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

func originAllowed(o Options, r *http.Request, origin string) bool {
	if slices.Contains(o.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if isLoopbackHost(u.Hostname()) {
		return true
	}
	// A same-origin request from a page Nexus served itself.
	return !o.Loopback && strings.EqualFold(u.Host, r.Host)
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address binds only loopback.
func IsLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLoopbackHost(h)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
