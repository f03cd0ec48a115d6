package catalog

// Serving the entries: one Streamable HTTP MCP server per entry, made when
// first reached; the Nexus configuration that points at them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the version every served server reports.
const Version = "livemcpbench"

// Handler serves every entry as its own Streamable HTTP MCP server at
// /{entry.Name}/mcp (any other path is 404), built with the MCP Go SDK:
// its Implementation name is the entry's name, its instructions the
// entry's description, its tools the entry's tools with their input
// schemas as given. A call of a tool answers the text
// "{server}/{tool} called with {arguments JSON}".
//
// An entry's server is made when its path is first requested, so a handler
// of thousands of entries costs next to nothing until they are used. Names
// should be unique, as [Entries] makes them; of entries with the same name
// the first is served.
func Handler(entries []Entry) http.Handler {
	servers := make(map[string]*lazyServer, len(entries))
	for _, e := range entries {
		if _, dup := servers[e.Name]; !dup {
			servers[e.Name] = &lazyServer{handler: sync.OnceValue(func() http.Handler { return streamable(e) })}
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{name}/mcp", func(w http.ResponseWriter, r *http.Request) {
		s, ok := servers[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		s.handler().ServeHTTP(w, r)
	})
	return mux
}

// lazyServer is the handler of one entry, made once, when first needed.
type lazyServer struct {
	handler func() http.Handler
}

// streamable returns the Streamable HTTP handler of e's server.
func streamable(e Entry) http.Handler {
	srv := NewServer(e)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// NewServer returns the MCP server of e, as [Handler] serves it: usable on
// any transport (for instance over stdio with mcp.StdioTransport).
func NewServer(e Entry) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: e.Name, Version: Version}, &mcp.ServerOptions{Instructions: e.Description})
	for _, t := range e.Tools {
		schema, _ := objectSchema(t.InputSchema) // Entries fixed it; a hand-made entry may not be
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}, cannedResult(e.Name, t.Name))
	}
	return srv
}

// cannedResult is the handler of tool on server: it answers a text naming
// both and echoing the call's arguments.
func cannedResult(server, tool string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := "{}"
		if raw := bytes.TrimSpace(req.Params.Arguments); len(raw) > 0 {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				args = b.String()
			} else {
				args = string(raw)
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: CannedText(server, tool, args)}}}, nil
	}
}

// CannedText is the text a call of tool on server answers, args being the
// call's arguments as compact JSON ("{}" when it gives none).
func CannedText(server, tool, args string) string {
	return fmt.Sprintf("%s/%s called with %s", server, tool, args)
}

// Start serves entries ([Handler]) on a new httptest server, closed when tb
// ends (its client connections closed first, so that open streams do not
// hold it), and returns its base URL: entry e is at URL + "/" + e.Name +
// "/mcp".
func Start(tb testing.TB, entries []Entry) string {
	tb.Helper()
	srv := httptest.NewServer(Handler(entries))
	tb.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// Config returns a Nexus configuration (YAML, the Nexus format) with one
// toolbox per toolbox of entries, in the order they first appear, each
// described by its category and listing its servers, each at
// baseURL/{name}/mcp. (The format has no description of a server: Nexus
// ignores a server's description key, so none is written.) A '$' in a
// value is written "$$", so that no text is taken for a variable.
func Config(baseURL string, entries []Entry) []byte {
	baseURL = strings.TrimRight(baseURL, "/")
	var order []string
	byToolbox := map[string][]Entry{}
	tools := 0
	for _, e := range entries {
		if _, ok := byToolbox[e.Toolbox]; !ok {
			order = append(order, e.Toolbox)
		}
		byToolbox[e.Toolbox] = append(byToolbox[e.Toolbox], e)
		tools += len(e.Tools)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The LiveMCPBench catalog as served by catalog.Handler: %d toolboxes, %d servers, %d tools.\n", len(order), len(entries), tools)
	b.WriteString("toolboxes:\n")
	for _, tb := range order {
		list := byToolbox[tb]
		fmt.Fprintf(&b, "  %s:\n", quote(tb))
		fmt.Fprintf(&b, "    description: %s\n", quote(list[0].Category))
		b.WriteString("    mcpServers:\n")
		for _, e := range list {
			fmt.Fprintf(&b, "      %s:\n", quote(e.Name))
			fmt.Fprintf(&b, "        url: %s\n", quote(baseURL+"/"+e.Name+"/mcp"))
			if e.Description != "" {
				fmt.Fprintf(&b, "        description: %s\n", quote(e.Description))
			}
		}
	}
	return b.Bytes()
}

// quote writes s as a YAML double-quoted scalar (a JSON string is one),
// '$' doubled for Nexus's ${VAR} expansion.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(strings.ReplaceAll(s, "$", "$$")) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
