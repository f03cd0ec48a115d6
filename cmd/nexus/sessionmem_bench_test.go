package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// BenchmarkSessionRSS measures what idle MCP sessions cost "nexus serve": it
// opens sessionsPerRun sessions (initialize + notifications/initialized, never
// closed) on each surface of a fresh process and reports the growth of VmRSS
// per 1,000 sessions. Run it with -benchtime=1x; each surface gets its own
// process. "bare-sdk" is the yardstick of issue 25 (at most 1.3× of it):
// the same sessions on a bare SDK server with one tool (testdata/echoserver),
// in the same run.
func BenchmarkSessionRSS(b *testing.B) {
	for _, path := range []string{"/mcp", "/mcp/agents", "/mcp/bounded"} {
		b.Run(path[1:], func(b *testing.B) {
			var sum float64
			for range b.N {
				p := startNexusServe(b, b.TempDir())
				sum += sessionRSS(b, p.cmd.Process.Pid, p.base+path)
				p.stop()
			}
			b.ReportMetric(sum/float64(b.N), "MB/1000-sessions")
		})
	}
	b.Run("bare-sdk", func(b *testing.B) {
		bin := buildEchoServer(b)
		var sum float64
		for range b.N {
			pid, url := startBareSDK(b, bin)
			sum += sessionRSS(b, pid, url)
		}
		b.ReportMetric(sum/float64(b.N), "MB/1000-sessions")
	})
}

// buildEchoServer builds testdata/echoserver, a bare SDK server with one
// tool, and returns its path.
func buildEchoServer(tb testing.TB) string {
	bin := filepath.Join(tb.TempDir(), "echoserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/echoserver").CombinedOutput(); err != nil {
		tb.Fatalf("build the echo server: %v\n%s", err, out)
	}
	return bin
}

// startBareSDK starts the bare SDK server bin on a free port until tb ends
// and returns its process id and endpoint.
func startBareSDK(tb testing.TB, bin string) (int, string) {
	addr := testtools.FreeAddr(tb)
	cmd := startProcess(tb, bin, "-addr", addr)
	waitListening(tb, addr)
	return cmd.Process.Pid, "http://" + addr + "/"
}

const sessionsPerRun = 3000

// sessionRSS returns the VmRSS growth of process pid, a fresh server, per
// 1,000 idle sessions opened on its endpoint.
func sessionRSS(b *testing.B, pid int, endpoint string) float64 {
	// Warm up: one session, so that lazily built state is not counted.
	if _, err := openSession(endpoint); err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second) // not synchronisation: an idle second before the measure, as after the sessions
	before, _, err := procMemory(pid)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, sessionsPerRun)
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	for range sessionsPerRun {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := openSession(endpoint); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second) // not synchronisation: the process idles before its memory is read
	after, _, err := procMemory(pid)
	if err != nil {
		b.Fatal(err)
	}
	return (after - before) * 1000 / sessionsPerRun
}

var sessionHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

// openSession initializes an MCP session at endpoint with raw requests and
// leaves it open; it returns the session id.
func openSession(endpoint string) (string, error) {
	post := func(body, session string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return sessionHTTP.Do(req)
	}
	resp, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, "")
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		return "", fmt.Errorf("initialize: %s (session %q)", resp.Status, id)
	}
	resp, err = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, id)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("notifications/initialized: %s", resp.Status)
	}
	return id, nil
}
