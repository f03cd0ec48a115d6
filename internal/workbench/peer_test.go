package workbench

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
)

// peerEnv makes the test binary run as an MCP Go SDK server over stdio
// instead of running the tests (see TestMain). No example server of the SDK
// has a tool that takes long enough to be killed in the middle of a call, or
// tells its process id; this one has both.
const peerEnv = "NEXUS_WORKBENCH_TEST_PEER"

// runPeer serves the peer's tools over stdio until stdin closes.
func runPeer() int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "workbench-test-peer", Version: "1"}, nil)
	type pidOut struct {
		PID int `json:"pid"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "pid", Description: "returns the server's process id"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, pidOut, error) {
			pid := os.Getpid()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(pid)}}}, pidOut{PID: pid}, nil
		})
	type sleepIn struct {
		MS      int    `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
		Started string `json:"started,omitempty" jsonschema:"a file to create once the sleep has started"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "sleep", Description: "sleeps, then answers"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			if in.Started != "" {
				if err := os.WriteFile(in.Started, nil, 0o644); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("slept %d ms", in.MS)}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("peer: %v", err)
		return 1
	}
	return 0
}

// peer is a stdio server running runPeer.
func peer() *config.Server {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return &config.Server{Transport: config.Stdio, Command: exe, Args: []string{"-test.run=^$"},
		Env: map[string]string{peerEnv: "1"}}
}
