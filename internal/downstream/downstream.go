// Package downstream reaches one downstream MCP server as its
// configuration says: a child process over stdio, Streamable HTTP or legacy
// SSE. The workbench (toolboxes) and the per-server proxy both dial through it.
package downstream

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
)

// Transport returns the MCP client transport that reaches srv: a child
// process for stdio (its environment is Nexus's plus srv.Env; its stderr
// goes to stderr), Streamable HTTP or legacy SSE for a URL (with
// srv.Headers on every request).
func Transport(srv *config.Server, stderr *os.File) (mcp.Transport, error) {
	return TransportVia(srv, stderr, nil)
}

// TransportVia is [Transport] whose HTTP transports use hc (nil: a new
// [HTTPClient]), so that requests made without the SDK on the same server
// ([HTTPSession]) share its keep-alive pool.
func TransportVia(srv *config.Server, stderr *os.File, hc *http.Client) (mcp.Transport, error) {
	if hc == nil && srv.TransportKind() != config.Stdio {
		hc = HTTPClient(srv)
	}
	switch srv.TransportKind() {
	case config.Stdio:
		if srv.Command == "" {
			return nil, fmt.Errorf("server %q: stdio transport without a command", srv.Name)
		}
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = os.Environ()
		for k, v := range srv.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Dir = srv.Cwd
		cmd.Stderr = stderr
		endWithParent(cmd)
		return &mcp.CommandTransport{Command: cmd}, nil
	case config.StreamableHTTP:
		return &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil
	case config.SSE:
		return &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil
	}
	return nil, fmt.Errorf("server %q: unknown transport %q", srv.Name, srv.Transport)
}

// HTTPClient is the client of one HTTP server's connection: its own pool of
// keep-alive connections, keeping up to srv.MaxIdleConnections idle (Go's
// default transport keeps 2 a host, so concurrent calls kept opening new
// TCP connections), and srv.Headers on every request. The proxy's raw
// passthrough shares one such client between all sessions of a server; the
// workbench's raw tools/call ([HTTPSession]) shares its SDK client's.
func HTTPClient(srv *config.Server) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	idle := srv.MaxIdleConnections
	if idle <= 0 {
		idle = config.DefaultMaxIdleConnections
	}
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = idle, idle
	var rt http.RoundTripper = tr
	if len(srv.Headers) > 0 {
		rt = headerTransport{h: srv.Headers, next: tr}
	}
	return &http.Client{Transport: rt}
}

type headerTransport struct {
	h    map[string]string
	next http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return t.next.RoundTrip(r)
}
