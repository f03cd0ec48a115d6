//go:build !linux

package downstream

import "os/exec"

// endWithParent is a no-op where the kernel offers no parent-death signal.
func endWithParent(*exec.Cmd) {}
