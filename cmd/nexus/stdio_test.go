package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// stdioPeer drives "nexus stdio" line by line over its standard input and
// output.
type stdioPeer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan map[string]any
	stderr *lockedBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, once exited is closed
}

func startStdio(t *testing.T, args ...string) *stdioPeer {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"stdio", "--data-dir", t.TempDir()}, args...)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	p := &stdioPeer{t: t, cmd: cmd, stdin: stdin, msgs: make(chan map[string]any, 100), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	testtools.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			p.msgs <- m
		}
		close(p.msgs)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			testtools.SignalGroup(cmd, syscall.SIGKILL)
			<-p.exited
		}
		testtools.EndGroup(t, cmd)
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write %.60q: %v", line, err)
	}
}

// until returns the messages received up to and including the response
// with the given id (a JSON literal).
func (p *stdioPeer) until(id string) []map[string]any {
	p.t.Helper()
	var got []map[string]any
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("nexus stdio ended before the response to %s; got %v\nstderr:\n%s", id, got, p.stderr)
			}
			got = append(got, m)
			if b, _ := json.Marshal(m["id"]); string(b) == id && m["method"] == nil {
				return got
			}
		case <-timeout:
			p.t.Fatalf("no response to %s; got %v", id, got)
		}
	}
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := p.until("1"); got[len(got)-1]["result"] == nil {
		p.t.Fatalf("initialize: %v", got)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestStdioSurvivesMalformedMessages: after initialize, each malformed
// line is answered with a JSON-RPC error (its code, and its id or null),
// and the ping sent after it is answered: the process keeps serving.
func TestStdioSurvivesMalformedMessages(t *testing.T) {
	p := startStdio(t)
	p.initialize()
	bad := []struct {
		name, line string
		code       int
		id         string
	}{
		{"not json", `hello`, -32700, "null"},
		{"truncated json", `{"jsonrpc":"2.0","id":5,"method":"ping"`, -32700, "null"},
		{"100k-deep nesting", strings.Repeat("[", 100000), -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`, -32600, "null"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, -32600, "8"},
		{"no jsonrpc", `{"id":"nine","method":"ping"}`, -32600, `"nine"`},
		{"not an object", `42`, -32600, "null"},
		{"params not an object", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"x"}`, -32600, "10"},
	}
	for i, tt := range bad {
		pingID := fmt.Sprint(100 + i)
		p.send(tt.line)
		p.send(`{"jsonrpc":"2.0","id":` + pingID + `,"method":"ping"}`)
		got := p.until(pingID)
		if len(got) != 2 {
			t.Errorf("%s: want an error then the ping's response, got %v", tt.name, got)
			continue
		}
		e, _ := got[0]["error"].(map[string]any)
		id, _ := json.Marshal(got[0]["id"])
		if e == nil || e["code"] != float64(tt.code) || string(id) != tt.id {
			t.Errorf("%s: answered %v, want error code %d with id %s", tt.name, got[0], tt.code, tt.id)
		}
		if got[1]["result"] == nil {
			t.Errorf("%s: the ping after it was answered %v", tt.name, got[1])
		}
	}
	// A tool call still works.
	p.send(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"belief_query","arguments":{"query":"default HTTP address"}}}`)
	if got := p.until(`"last"`); !strings.Contains(fmt.Sprint(got[len(got)-1]["result"]), "7777") {
		t.Errorf("tool call after the malformed lines: %v", got)
	}
	p.stdin.Close()
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("nexus stdio exited with %v at the end of its input\n%s", p.err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nexus stdio did not exit at the end of its input")
	}
	if !strings.Contains(p.stderr.String(), "refused a malformed JSON-RPC message") {
		t.Errorf("refused messages are not logged:\n%s", p.stderr)
	}
}

// TestStdioOversizedMessageEndsTheConnection: a message over 4 MiB is
// answered with an error, ends the process with a non-zero exit status and
// leaves an ERROR log line naming the limit.
func TestStdioOversizedMessageEndsTheConnection(t *testing.T) {
	p := startStdio(t)
	p.initialize()
	// Nexus stops reading mid-message: the write may fail.
	go io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":"`+strings.Repeat("a", MaxStdioMessage)+`"}}}`+"\n")
	got := p.until("null")
	if e, _ := got[len(got)-1]["error"].(map[string]any); e == nil || e["code"] != -32600.0 || !strings.Contains(fmt.Sprint(e["message"]), "4194304-byte limit") {
		t.Errorf("answer to the oversized message: %v", got)
	}
	select {
	case <-p.exited:
		if p.err == nil {
			t.Error("exit status 0 after an oversized message")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nexus stdio did not end after an oversized message")
	}
	logs := p.stderr.String()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "longer than the limit") || !strings.Contains(logs, "limit_bytes=4194304") {
		t.Errorf("no log line saying why the connection ended:\n%s", logs)
	}
}
