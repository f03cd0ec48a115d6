package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// binary is the nexus binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv(relayPeerEnv) != "" {
		os.Exit(runRelayPeer())
	}
	dir, err := os.MkdirTemp("", "nexus-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "nexus")
	args := []string{"build", "-o", binary}
	if os.Getenv("NEXUS_TEST_RACE") != "" {
		// The binary the end-to-end tests run, with the race detector
		// (its reports go to the logs the tests show when they fail).
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build nexus: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startServe runs "nexus serve" on a free port with a fresh data directory
// (plus extra args) until the test ends, and returns its base URL once
// /healthz answers.
func startServe(t testing.TB, extra ...string) string {
	t.Helper()
	return startServeIn(t, t.TempDir(), extra...)
}

// startServeIn is [startServe] on the data directory dir.
func startServeIn(t testing.TB, dir string, extra ...string) string {
	t.Helper()
	return startServeAt(t, dir, testtools.FreeAddr(t), extra...)
}

// startServeAt is [startServeIn] listening on addr (a port this machine can
// reach on 127.0.0.1, e.g. 0.0.0.0:PORT).
func startServeAt(t testing.TB, dir, addr string, extra ...string) string {
	t.Helper()
	args := append([]string{"serve", "--addr", addr, "--data-dir", dir}, extra...)
	cmd := exec.Command(binary, args...)
	stderr, _ := cmd.StderrPipe()
	testtools.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		logs <- b.String()
	}()
	t.Cleanup(func() {
		testtools.Stop(t, cmd, os.Interrupt, 10*time.Second)
		var l string
		select {
		case l = <-logs:
		case <-time.After(5 * time.Second): // a child still holds stderr
			l = "(the logs did not end within 5 s of the process)"
		}
		if strings.Contains(l, "WARNING: DATA RACE") {
			t.Errorf("the race detector reported a race in nexus serve (NEXUS_TEST_RACE)")
		}
		if t.Failed() {
			t.Logf("nexus serve logs:\n%s", l)
		}
	})
	_, port, _ := net.SplitHostPort(addr)
	base := "http://127.0.0.1:" + port
	testtools.EventuallyErr(t, 20*time.Second, "nexus serve to become healthy at "+base, func() error { return healthy(base) })
	return base
}

// healthy is the readiness probe of "nexus serve" at base: GET /healthz
// answers 200.
func healthy(base string) error {
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	return nil
}

// runNexus runs the binary with args and returns stdout, stderr and the exit code.
func runNexus(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	testtools.OwnGroup(cmd)
	err := cmd.Run()
	testtools.EndGroup(t, cmd)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
