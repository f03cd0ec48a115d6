//go:build !linux

package downstream

import (
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// endWithParent is a no-op where the kernel offers no parent-death signal.
func endWithParent(*exec.Cmd) {}

// Reap does nothing here: stdio servers are not started in a process group
// of their own.
func Reap(mcp.Transport) {}
