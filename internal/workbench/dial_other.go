//go:build !linux

package workbench

import "os/exec"

// endWithParent is a no-op where the kernel offers no parent-death signal.
func endWithParent(*exec.Cmd) {}
