package rest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/rest"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// checkErrorShape fails unless body is the one error shape of the REST
// surface: {"error": {"code", "message", "requestId", "field"?, "details"?}}
// with the request id of the X-Request-Id header.
func checkErrorShape(t *testing.T, status int, header http.Header, body []byte) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, body)
	}
	if len(top) != 1 || top["error"] == nil {
		t.Fatalf("body has keys other than error: %s", body)
	}
	var e map[string]any
	if err := json.Unmarshal(top["error"], &e); err != nil {
		t.Fatalf("error is not an object: %s", body)
	}
	for k := range e {
		if !slices.Contains([]string{"code", "message", "requestId", "field", "details"}, k) {
			t.Errorf("unexpected key error.%s: %s", k, body)
		}
	}
	codes := []any{string(errs.BadRequest), string(errs.Unauthorized), string(errs.Forbidden), string(errs.NotFound),
		string(errs.Conflict), string(errs.UnprocessableEntity), string(errs.RateLimited), string(errs.Internal), string(errs.Unavailable)}
	if !slices.Contains(codes, e["code"]) {
		t.Errorf("error.code %v is not an ADR-012 code: %s", e["code"], body)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("no error.message: %s", body)
	}
	if id, _ := e["requestId"].(string); id == "" || id != header.Get("X-Request-Id") {
		t.Errorf("error.requestId %v, X-Request-Id %q", e["requestId"], header.Get("X-Request-Id"))
	}
	if d, ok := e["details"]; ok {
		dm, _ := d.(map[string]any)
		if len(dm) == 0 {
			t.Errorf("error.details is not a non-empty object: %s", body)
		}
		for k := range dm {
			if !slices.Contains([]string{"reason", "retryAfter", "limit"}, k) {
				t.Errorf("unexpected key error.details.%s: %s", k, body)
			}
		}
	}
	if status < 400 {
		t.Errorf("status %d for an error", status)
	}
}

// Issue 17: every error of the REST surface, whatever produced it (route,
// method, body, tool of any family, query parameter, the guard in front), has
// one JSON shape.
func TestErrorsHaveOneShape(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{MaxBodyBytes: 4096})
	big := `{"name":"` + strings.Repeat("a", 5000) + `"}`
	tests := []struct {
		name, method, target, body string
		status                     int
	}{
		{"unknown route", "GET", "/api/nope", "", 404},
		{"root", "GET", "/", "", 404},
		{"method not allowed", "DELETE", "/api/tools", "", 405},
		{"method not allowed on a call", "GET", "/api/tools/echo:call", "", 405},
		{"call without :call", "POST", "/api/tools/echo", "{}", 404},
		{"bad JSON (valence tool)", "POST", "/api/tools/echo:call", `{"name":`, 400},
		{"null body (valence tool)", "POST", "/api/tools/echo:call", `null`, 400},
		{"schema error (valence tool)", "POST", "/api/tools/echo:call", `{"name":5}`, 400},
		{"not found (valence tool)", "POST", "/api/tools/echo:call", `{"name":"missing"}`, 404},
		{"internal (valence tool)", "POST", "/api/tools/echo:call", `{"name":"boom"}`, 500},
		{"rate limited (valence tool)", "POST", "/api/tools/echo:call", `{"name":"limited"}`, 429},
		{"bad JSON (tutor tool)", "POST", "/api/tools/tn_course_get:call", `[`, 400},
		{"not found (tutor tool)", "POST", "/api/tools/tn_course_get:call", `{"course":"sfu:CMPT 999"}`, 404},
		{"text error (workbench tool)", "POST", "/api/tools/open_box:call", `{"toolbox":"nope"}`, 404},
		{"bad arguments (downstream tool)", "POST", "/api/tools/dev__files__read:call", `{}`, 400},
		{"unknown tool", "POST", "/api/tools/nope:call", `{}`, 404},
		{"body too large", "POST", "/api/tools/echo:call", big, 413},
		{"bad cursor", "GET", "/api/traces?cursor=garbage", "", 400},
		{"bad limit", "GET", "/api/traces?limit=0", "", 400},
		{"repeated parameter", "GET", "/api/traces?tool=a&tool=b", "", 400},
		{"unknown parameter", "GET", "/api/traces?sessionId=x", "", 400},
		{"bad source", "GET", "/api/tools?source=elsewhere", "", 400},
		{"openapi with the wrong method", "POST", "/openapi.json", "", 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, body))
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			checkErrorShape(t, rec.Code, rec.Header(), rec.Body.Bytes())
		})
	}
	t.Run("tutor details are kept", func(t *testing.T) {
		r := e.do(t, "POST", "/api/tools/tn_course_get:call", `{"course":"sfu:CMPT 999"}`)
		if get(r.json, "error.details.reason") != "unknown_course" || get(r.json, "error.code") != "NOT_FOUND" {
			t.Errorf("%s", r.body)
		}
	})
	t.Run("field is kept", func(t *testing.T) {
		r := e.do(t, "GET", "/api/traces?limit=0", "")
		if get(r.json, "error.field") != "limit" {
			t.Errorf("%s", r.body)
		}
	})

	// Handlers missing a part.
	for _, tt := range []struct {
		name, method, target string
		h                    http.Handler
	}{
		{"traces without a store", "GET", "/api/traces", rest.Handler(rest.Options{Registry: e.reg})},
		{"calls without a pipeline", "POST", "/api/tools/echo:call", rest.Handler(rest.Options{Registry: e.reg})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, strings.NewReader("{}")))
			if rec.Code != 503 {
				t.Errorf("status %d", rec.Code)
			}
			checkErrorShape(t, rec.Code, rec.Header(), rec.Body.Bytes())
		})
	}

	// Behind the guard, as nexus serve mounts it.
	front := httpapi.Handler(httpapi.Options{Loopback: true, MaxBodyBytes: 1024, BodyTimeout: 200 * time.Millisecond,
		AllowedOrigins: []string{"https://app.example.com"},
		Routes:         map[string]http.Handler{"/api/": e.h, "/openapi.json": e.h}})
	ts := httptest.NewServer(front)
	defer ts.Close()
	for _, tt := range []struct {
		name, method, path, host, origin, body string
		status                                 int
	}{
		{"guard: body too large", "POST", "/api/tools/echo:call", "", "", `{"name":"` + strings.Repeat("a", 2000) + `"}`, 413},
		{"guard: foreign Host", "GET", "/api/tools", "evil.example.com", "", "", 403},
		{"guard: foreign Origin", "GET", "/api/tools", "", "https://evil.example.com", "", 403},
		{"guard: unknown route", "GET", "/api/nope", "", "", "", 404},
		{"guard: tool error for an allowed origin", "POST", "/api/tools/echo:call", "", "https://app.example.com", `{"name":"missing"}`, 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, _ := http.NewRequest(tt.method, ts.URL+tt.path, body)
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			checkErrorShape(t, resp.StatusCode, resp.Header, b)
		})
	}
	t.Run("guard: stalled body", func(t *testing.T) {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, "POST /api/tools/echo:call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"name\"")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 408 {
			t.Errorf("status %d: %s", resp.StatusCode, b)
		}
		checkErrorShape(t, resp.StatusCode, resp.Header, b)
	})
}

// Issue 17: a client that goes away while its traces are being read is not
// an ERROR in the log.
func TestTracesClientGoneIsNotAnError(t *testing.T) {
	c := &logtest.Capture{}
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{Logger: slog.New(c)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/traces", nil).WithContext(ctx))
	for _, r := range c.Records() {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged at %s: %s", r.Level, r.Message)
		}
	}
	if rec.Code == 500 {
		t.Errorf("answered 500 to a client that went away: %s", rec.Body)
	}
}
