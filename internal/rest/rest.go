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
//   - Failure: the one error shape (below), whatever the tool's family; the
//     HTTP status follows the error code ([HTTPStatus]). (On MCP, errors
//     keep their family's shape inside the tool result.)
//   - A downstream (source "mcp") tool that reports a tool-level error
//     (CallToolResult.isError) is a successful call at the HTTP level: 200
//     with the downstream result unmodified, "isError": true inside. Only a
//     failure of the call itself (bad arguments, unknown tool, server
//     unavailable) gets a 4xx/5xx.
//
// Every error response, of a tool or of the surface itself (unknown route,
// wrong method, body too large, bad query parameter or cursor) or of the
// HTTP guard in front (403, 408, 413), has one JSON shape,
// [errs.Body]: {"error": {"code", "message", "details"?,
// "requestId", "field"?}}, the inner object being Tutor Nexus ADR-012's
// ErrorResponse plus the offending field; never HTML or text.
//
// Every response carries X-Request-Id; call responses also X-Nexus-Session
// and X-Nexus-Workspace, the session and workspace the call ran in.
//
// The handler expects to sit behind the HTTP guard (package httpapi), which
// validates Host and Origin and bounds request bodies; it bounds bodies
// itself too, so it is safe on its own.
package rest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/httpapi"
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
	// OpenAll opens the configured toolboxes (nil: none), so that the tool
	// list and the OpenAPI document name their tools as MCP clients see
	// them; it returns once the openings that can succeed soon have ended.
	OpenAll func(context.Context)
	Logger  *slog.Logger
}

type handler struct {
	reg     *registry.Registry
	p       *pipeline.Pipeline
	st      *store.Store
	key     []byte
	version string
	maxBody int64
	openAll func(context.Context)
	log     *slog.Logger
}

// Handler returns the REST handler. Mount it for "/api/" and
// "GET /openapi.json"; it answers any other path with a JSON 404.
func Handler(o Options) http.Handler {
	h := &handler{reg: o.Registry, p: o.Pipeline, st: o.Store, key: o.CursorKey, version: o.Version,
		maxBody: o.MaxBodyBytes, openAll: o.OpenAll, log: o.Logger}
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
	// Any other path or method: a JSON 404 or 405.
	inner := httpapi.JSONMux(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		inner.ServeHTTP(w, r)
	})
}

// open opens the configured toolboxes before their tools are listed.
func (h *handler) open(ctx context.Context) {
	if h.openAll != nil {
		h.openAll(ctx)
	}
}

// Endpoints are the endpoints of the handler, for an index.
func Endpoints() []httpapi.Endpoint {
	return []httpapi.Endpoint{
		{Path: "/api/tools", Description: "REST: the tools (GET)"},
		{Path: "/api/tools/{name}:call", Description: "REST: call a tool; the body is its arguments (POST)"},
		{Path: "/api/traces", Description: "REST: traced calls, newest first (GET)"},
		{Path: "/openapi.json", Description: "OpenAPI 3.1 document of the REST API (GET)"},
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

// fail writes e in the one error shape with the given status (0: from the
// code). Internal errors are logged and their message replaced.
func (h *handler) fail(w http.ResponseWriter, status int, e *errs.Error) {
	id := w.Header().Get("X-Request-Id")
	if id == "" {
		id = errs.NewRequestID()
		w.Header().Set("X-Request-Id", id)
	}
	if status == 0 {
		status = HTTPStatus(e.Code)
	}
	if e.Code == errs.Internal {
		h.log.Error("rest request failed", "request_id", id, "err", e)
		e = &errs.Error{Code: errs.Internal, Message: "internal error (request " + id + ")"}
	}
	errs.Write(w, status, e)
}

// failErr writes err, a BAD_REQUEST from validation or any other error. A
// failure because the client went away is no error: it is logged at Debug
// and nothing is written (no one would read it).
func (h *handler) failErr(w http.ResponseWriter, r *http.Request, err error) {
	if ctxErr := r.Context().Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		h.log.Debug("rest request abandoned by the client", "path", r.URL.Path, "err", err)
		return
	}
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
