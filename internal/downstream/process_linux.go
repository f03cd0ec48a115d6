package downstream

import (
	"os/exec"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// endWithParent asks the kernel to end the child when Nexus dies, so stdio
// servers never outlive a killed hub, and starts it in a process group of
// its own, so that what it starts ends with it ([Reap]).
func endWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}

// Reap ends what is left of a stdio server's process group once its
// session is closed (the SDK ends the server itself: stdin closed, then
// SIGTERM, then SIGKILL): the processes it started and left behind (an npx
// or a shell wrapper's children) get SIGKILL. A transport of another kind,
// or one never started, is left alone.
func Reap(t mcp.Transport) {
	ct, ok := t.(*mcp.CommandTransport)
	if !ok || ct.Command == nil || ct.Command.Process == nil || ct.Command.SysProcAttr == nil || !ct.Command.SysProcAttr.Setpgid {
		return
	}
	// ESRCH: nothing of the group is left.
	_ = syscall.Kill(-ct.Command.Process.Pid, syscall.SIGKILL)
}
