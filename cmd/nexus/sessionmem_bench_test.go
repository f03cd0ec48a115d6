package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkSessionRSS measures what idle MCP sessions cost "nexus serve": it
// opens sessionsPerRun sessions (initialize + notifications/initialized, never
// closed) on each surface of a fresh process and reports the growth of VmRSS
// per 1,000 sessions. Run it with -benchtime=1x; each surface gets its own
// process.
func BenchmarkSessionRSS(b *testing.B) {
	for _, path := range []string{"/mcp", "/mcp/agents", "/mcp/bounded"} {
		b.Run(path[1:], func(b *testing.B) {
			var sum float64
			for range b.N {
				sum += sessionRSS(b, path)
			}
			b.ReportMetric(sum/float64(b.N), "MB/1000-sessions")
		})
	}
}

const sessionsPerRun = 3000

// sessionRSS returns the VmRSS growth of a fresh "nexus serve" per 1,000
// idle sessions opened on path.
func sessionRSS(b *testing.B, path string) float64 {
	p := startNexusServe(b, b.TempDir())
	defer p.stop()
	// Warm up: one session, so that lazily built state is not counted.
	if _, err := openSession(p.base + path); err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second) // not synchronisation: an idle second before the measure, as after the sessions
	before, _, err := procMemory(p.cmd.Process.Pid)
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
			if _, err := openSession(p.base + path); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		b.Fatalf("%v\nstderr:\n%s", err, p.stderr.String())
	}
	time.Sleep(2 * time.Second) // not synchronisation: the process idles before its memory is read
	after, _, err := procMemory(p.cmd.Process.Pid)
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
