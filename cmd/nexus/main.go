// Command nexus is the Nexus MCP tool hub.
//
//	nexus serve  [--addr HOST:PORT] [--data-dir DIR] [--db URL]   MCP over Streamable HTTP at /mcp
//	nexus stdio  [--data-dir DIR] [--db URL]                      MCP over stdin/stdout
//	nexus tools list [--json]                                     the tools Nexus serves
//	nexus call TOOL --args JSON                                   one call through the pipeline
//
// Every flag has an environment equivalent: NEXUS_ADDR, NEXUS_DATA_DIR,
// NEXUS_DB, NEXUS_LOG_LEVEL.
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
  nexus serve [--addr HOST:PORT] [--data-dir DIR] [--db URL]
  nexus stdio [--data-dir DIR] [--db URL]
  nexus tools list [--json] [--data-dir DIR] [--db URL]
  nexus call TOOL --args JSON [--data-dir DIR] [--db URL]
  nexus version

Run "nexus COMMAND --help" for a command's flags.
Environment: NEXUS_ADDR, NEXUS_DATA_DIR, NEXUS_DB, NEXUS_LOG_LEVEL (debug|info|warn|error).
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
	case "call":
		err = cmdCall(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "nexus", versionString())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "nexus: unknown command %q\n\n%s", cmd, usage)
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
