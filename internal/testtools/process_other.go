//go:build !unix

package testtools

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Without process groups these end cmd's own process only; see
// process_unix.go.

// OwnGroup does nothing here.
func OwnGroup(cmd *exec.Cmd) {}

// SignalGroup kills cmd's process.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return errors.New("not started")
	}
	return cmd.Process.Kill()
}

// EndGroup does nothing here.
func EndGroup(tb testing.TB, cmd *exec.Cmd) {}

// Stop ends cmd: sig, up to grace to exit, then Kill.
func Stop(tb testing.TB, cmd *exec.Cmd, sig os.Signal, grace time.Duration) (graceful bool, err error) {
	if cmd.Process == nil {
		return false, errors.New("not started")
	}
	done := make(chan error, 1)
	cmd.Process.Signal(sig)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		return true, err
	case <-time.After(grace):
		cmd.Process.Kill()
		return false, <-done
	}
}
