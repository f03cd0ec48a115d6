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
		return &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: headerClient(srv.Headers)}, nil
	case config.SSE:
		return &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: headerClient(srv.Headers)}, nil
	}
	return nil, fmt.Errorf("server %q: unknown transport %q", srv.Name, srv.Transport)
}

func headerClient(h map[string]string) *http.Client {
	if len(h) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{h: h, next: http.DefaultTransport}}
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
