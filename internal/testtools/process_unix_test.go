//go:build unix

package testtools

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopEndsTheGroup: a shell that starts two sleeps and is stopped with
// SIGTERM exits and leaves them behind; Stop ends them too, and none of the
// group is left.
func TestStopEndsTheGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & sleep 300 & echo started; wait")
	OwnGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, _ := out.Read(buf); !strings.HasPrefix(string(buf[:n]), "started") {
		t.Fatalf("the shell said %q", buf[:n])
	}
	pgid := cmd.Process.Pid
	if left := groupMembers(pgid); len(left) != 3 {
		t.Fatalf("group %d holds %v, want the shell and two sleeps", pgid, left)
	}
	graceful, err := Stop(t, cmd, syscall.SIGTERM, time.Minute)
	if !graceful || err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("Stop: graceful %v, %v; want the shell ended by SIGTERM", graceful, err)
	}
	if left := groupMembers(pgid); len(left) != 0 {
		t.Fatalf("processes %v of group %d left after Stop", left, pgid)
	}
	// The check itself sees a live group: this test's own.
	if left := groupMembers(syscall.Getpgrp()); len(left) == 0 {
		t.Fatalf("no process in this test's group %s", strconv.Itoa(syscall.Getpgrp()))
	}
}
