// Command echoserver is the downstream MCP server of the cross-process
// proxy benchmark (cmd/nexus/proxy_bench_test.go): a Go SDK server with one
// trivial tool, echo, on Streamable HTTP (stateful, the SDK's defaults;
// with -stateless, the SDK's stateless handler, which serves clients of the
// sessionless protocol without a session).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	stateless := flag.Bool("stateless", false, "serve with the SDK's stateless handler (the sessionless protocol)")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: *stateless})
	if err := http.ListenAndServe(*addr, h); err != nil {
		slog.Error("echoserver", "error", err)
		os.Exit(1)
	}
}
