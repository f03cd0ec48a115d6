//go:build unix

package testtools

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A process a test starts must not outlive the test, nor may the processes
// it starts in turn (nginx's workers, a browser's helpers, the downstream
// servers of a nexus process killed with SIGKILL). Such a command is
// started in a process group of its own ([OwnGroup]); its cleanup stops it
// as it should be stopped, waits for it, then ends what is left of its
// group and waits until none of it remains ([EndGroup], [Stop]).

// groupGone is how long EndGroup waits for the processes of a group it
// killed to go before it fails the test.
const groupGone = 10 * time.Second

// OwnGroup makes cmd, when it starts, the leader of a process group of its
// own, which the processes it starts join: [SignalGroup] and [EndGroup]
// reach them all. Call it before cmd.Start.
func OwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.Cancel != nil {
		// Made by exec.CommandContext: its cancellation kills the whole group.
		cmd.Cancel = func() error { return SignalGroup(cmd, syscall.SIGKILL) }
	}
}

// SignalGroup sends sig to every process of cmd's group (cmd started after
// [OwnGroup]).
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return errors.New("not started")
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// EndGroup ends what is left of cmd's process group once cmd itself has
// exited and been waited for: SIGKILL to the group, then it waits until no
// live process of the group remains, failing tb (Error, naming them) if
// some are still there after a while.
func EndGroup(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGKILL)
	deadline := time.Now().Add(groupGone)
	for {
		left := groupMembers(pgid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Errorf("processes %v of the group of %s (pid %d) still alive %s after SIGKILL", left, cmd.Path, pgid, groupGone)
			return
		}
		time.Sleep(PollInterval)
	}
}

// Stop ends cmd, started after [OwnGroup] and waited for by nobody else:
// it sends sig to cmd's process (the signal that stops it as it should be
// stopped: SIGINT or SIGTERM for nexus, SIGQUIT for nginx), waits up to
// grace for it to exit, else kills its group with SIGKILL and waits for it,
// then ends what is left of the group ([EndGroup]). It returns whether cmd
// exited within grace, and cmd.Wait's error.
func Stop(tb testing.TB, cmd *exec.Cmd, sig os.Signal, grace time.Duration) (graceful bool, err error) {
	tb.Helper()
	if cmd.Process == nil {
		return false, errors.New("not started")
	}
	done := make(chan error, 1)
	cmd.Process.Signal(sig)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		graceful = true
	case <-time.After(grace):
		SignalGroup(cmd, syscall.SIGKILL)
		err = <-done
	}
	EndGroup(tb, cmd)
	return graceful, err
}

// groupMembers lists the live processes (zombies aside) of process group
// pgid: from /proc where there is one, else as kill(-pgid, 0) says (the
// group leader's pid standing for all of them).
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if syscall.Kill(-pgid, 0) == nil {
			return []int{pgid}
		}
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}
