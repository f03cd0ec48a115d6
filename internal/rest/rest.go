// Package rest is Nexus's REST surface (SPEC section 2):
//
//	GET  /api/tools               the tools, seed 004's metadata plus the listed input schema
//	POST /api/tools/{name}:call   call a tool; the body is its arguments object
//	GET  /api/traces              traced calls, newest first, cursor paginated
//	GET  /openapi.json            OpenAPI 3.1, generated from the registry per request
//
// Like every surface it only parses and renders: a call is one
// [pipeline.Request] with Surface "rest", and its [pipeline.Outcome] is
// rendered as follows.
//
//   - Success: 200 with the tool's result as JSON.
//   - Failure: the family's error body ([pipeline.Outcome.Body]: valence
//     {"success": false, "error_code", "error_message"}, tutor ADR-012
//     ErrorResponse) or, for families whose errors are plain text (workbench
//     meta-tools, unknown tools), {"error": {"code", "message", "requestId"}};
//     the HTTP status follows the error code ([HTTPStatus]).
//   - A downstream (source "mcp") tool that reports a tool-level error
//     (CallToolResult.isError) is a successful call at the HTTP level: 200
//     with the downstream result unmodified, "isError": true inside. Only a
//     failure of the call itself (bad arguments, unknown tool, server
//     unavailable) gets a 4xx/5xx.
//
// Every response carries X-Request-Id; call responses also X-Nexus-Session
// and X-Nexus-Workspace, the session and workspace the call ran in. Errors
// of the surface itself (unknown route, wrong method, bad query parameter)
// are {"error": {"code", "message", "requestId", "field"?}} JSON, never HTML.
//
// The handler expects to sit behind the HTTP guard (package httpapi), which
// validates Host and Origin and bounds request bodies; it bounds bodies
// itself too, so it is safe on its own.
package rest

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Surface is the surface name REST calls carry in traces.
const Surface = "rest"

// DefaultMaxBodyBytes bounds a call's body when Options.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 1 << 20

// Options configure the handler.
type Options struct {
	// Registry lists the tools; nil means Pipeline's registry.
	Registry *registry.Registry
	// Pipeline runs calls; nil makes calls answer 503.
	Pipeline *pipeline.Pipeline
	// Store holds the traces; nil makes /api/traces answer 503.
	Store *store.Store
	// CursorKey signs trace cursors. Replicas behind one load balancer must
	// share it, and it should survive restarts so that cursors do too; nil
	// means a random key per handler (cursors then only work on this
	// process).
	CursorKey []byte
	// Version is the info.version of the OpenAPI document.
	Version string
	// MaxBodyBytes bounds a call's request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	Logger       *slog.Logger
}

type handler struct {
	reg     *registry.Registry
	p       *pipeline.Pipeline
	st      *store.Store
	key     []byte
	version string
	maxBody int64
	log     *slog.Logger
}

// Handler returns the REST handler. Mount it for "/api/" and
// "GET /openapi.json"; it answers any other path with a JSON 404.
func Handler(o Options) http.Handler {
	h := &handler{reg: o.Registry, p: o.Pipeline, st: o.Store, key: o.CursorKey, version: o.Version,
		maxBody: o.MaxBodyBytes, log: o.Logger}
	if h.reg == nil && h.p != nil {
		h.reg = h.p.Registry()
	}
	if h.reg == nil {
		h.reg = registry.New()
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if len(h.key) == 0 {
		h.key = make([]byte, 32)
		rand.Read(h.key)
	}
	if h.version == "" {
		h.version = "dev"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tools", h.listTools)
	// Go's patterns cannot match a literal suffix inside a segment, so
	// "{name}:call" is one wildcard whose suffix call checks.
	mux.HandleFunc("POST /api/tools/{rest}", h.call)
	mux.HandleFunc("GET /api/traces", h.traces)
	mux.HandleFunc("GET /openapi.json", h.openapi)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if _, pattern := mux.Handler(r); pattern == "" {
			// The mux's own 404 or 405 (which writes text): learn which,
			// and answer in JSON.
			inner, _ := mux.Handler(r)
			rec := &recorder{header: http.Header{}}
			inner.ServeHTTP(rec, r)
			if rec.status == http.StatusMethodNotAllowed {
				w.Header().Set("Allow", rec.header.Get("Allow"))
				h.fail(w, http.StatusMethodNotAllowed, errs.E(errs.BadRequest, "method %s is not allowed on %s; allowed: %s",
					r.Method, r.URL.Path, rec.header.Get("Allow")))
				return
			}
			h.fail(w, http.StatusNotFound, errs.E(errs.NotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// recorder captures the status and headers of the mux's fallback handlers.
type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// HTTPStatus is the HTTP status of an error code (ADR-012's table).
func HTTPStatus(c errs.Code) int {
	switch c {
	case errs.BadRequest:
		return http.StatusBadRequest
	case errs.Unauthorized:
		return http.StatusUnauthorized
	case errs.Forbidden:
		return http.StatusForbidden
	case errs.NotFound:
		return http.StatusNotFound
	case errs.Conflict:
		return http.StatusConflict
	case errs.UnprocessableEntity:
		return http.StatusUnprocessableEntity
	case errs.RateLimited:
		return http.StatusTooManyRequests
	case errs.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errorBody is the error shape of the REST surface itself and of tool
// families whose errors render as plain text.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      errs.Code `json:"code"`
	Message   string    `json:"message"`
	RequestID string    `json:"requestId"`
	Field     string    `json:"field,omitempty"`
}

// fail writes e as the REST error shape with the given status (0: from the
// code). Internal errors are logged and their message replaced.
func (h *handler) fail(w http.ResponseWriter, status int, e *errs.Error) {
	id := w.Header().Get("X-Request-Id")
	if id == "" {
		id = newRequestID()
		w.Header().Set("X-Request-Id", id)
	}
	if status == 0 {
		status = HTTPStatus(e.Code)
	}
	msg := e.Message
	if e.Code == errs.Internal {
		h.log.Error("rest request failed", "request_id", id, "err", e)
		msg = "internal error (request " + id + ")"
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	writeJSON(w, status, errorBody{Error: errorDetail{Code: e.Code, Message: msg, RequestID: id, Field: e.Field}})
}

// failErr writes err, a BAD_REQUEST from validation or any other error.
func (h *handler) failErr(w http.ResponseWriter, err error) {
	var e *errs.Error
	if errors.As(err, &e) {
		h.fail(w, 0, e)
		return
	}
	h.fail(w, 0, &errs.Error{Code: errs.Internal, Message: "internal error", Err: err})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only values of this package are written; cannot happen
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL_ERROR","message":"encode response"}}`)
	}
	writeRaw(w, status, b)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
	w.Write([]byte("\n"))
}

// newRequestID returns a ULID-formatted id (48-bit millisecond time, 80
// random bits, Crockford base32) like the pipeline's request ids, for
// responses that run no call.
func newRequestID() string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	rand.Read(b[6:])
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, 26)
	mask := big.NewInt(31)
	for i := 25; i >= 0; i-- {
		out[i] = alphabet[new(big.Int).And(n, mask).Int64()]
		n.Rsh(n, 5)
	}
	return string(out)
}
