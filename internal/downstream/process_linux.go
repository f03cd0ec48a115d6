package downstream

import (
	"os/exec"
	"syscall"
)

// endWithParent asks the kernel to end the child when Nexus dies, so stdio
// servers never outlive a killed hub.
func endWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
