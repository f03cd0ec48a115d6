package rest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// Response headers of a call.
const (
	HeaderRequestID = "X-Request-Id"
	HeaderSession   = "X-Nexus-Session"
	HeaderWorkspace = "X-Nexus-Workspace"
)

// callSuffix ends the last path segment of a call: /api/tools/{name}:call.
const callSuffix = ":call"

// call handles POST /api/tools/{name}:call.
func (h *handler) call(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("rest"), callSuffix)
	if !ok || name == "" {
		h.fail(w, http.StatusNotFound, errs.E(errs.NotFound, "no such endpoint: %s %s; call a tool with POST /api/tools/{name}:call", r.Method, r.URL.Path))
		return
	}
	if h.p == nil {
		h.fail(w, 0, errs.E(errs.Unavailable, "tool calls are not served by this handler"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.fail(w, http.StatusRequestEntityTooLarge, errs.E(errs.BadRequest, "request body is larger than %d bytes", mbe.Limit))
			return
		}
		h.fail(w, http.StatusBadRequest, errs.E(errs.BadRequest, "read request body: %v", err))
		return
	}
	// An empty body (or only white space) means no arguments.
	body = bytes.TrimSpace(body)
	o := h.p.Call(r.Context(), pipeline.Request{Tool: name, Args: body, Surface: Surface})

	hdr := w.Header()
	hdr.Set(HeaderRequestID, o.RequestID)
	if o.SessionID != "" {
		hdr.Set(HeaderSession, o.SessionID)
	}
	if o.Workspace != "" {
		hdr.Set(HeaderWorkspace, o.Workspace)
	}
	if o.Err == nil {
		// Includes a downstream result with isError: the call worked, the
		// tool reported an error of its own (see the package doc).
		writeRaw(w, http.StatusOK, o.Result)
		return
	}
	// The one error shape, whatever the tool's family (its own shape is
	// for MCP results); o.Err's message is already safe to show.
	errs.Write(w, HTTPStatus(o.Err.Code), o.Err)
}
