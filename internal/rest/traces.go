package rest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/trace"
	"github.com/nexus-mcp/nexus/internal/users"
)

// TracePage is the body of GET /api/traces (ADR-012's paginated shape,
// without totalCount).
type TracePage struct {
	Items      []TraceItem `json:"items"`
	NextCursor string      `json:"nextCursor,omitempty"`
	HasMore    bool        `json:"hasMore"`
}

// TraceItem is one traced call.
type TraceItem struct {
	RequestID string `json:"requestId"`
	// Name is the flat name of the tool (for an unknown tool, the name it
	// was called with); Toolbox, Server and Tool its identity (empty for
	// an unknown tool).
	Name      string `json:"name"`
	Toolbox   string `json:"toolbox"`
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	Source    string `json:"source"`
	Surface   string `json:"surface"`
	SessionID string `json:"sessionId,omitempty"`
	Workspace string `json:"workspace"`
	// UserID is the user the call acted as ("local" for the local user).
	UserID     string `json:"userId,omitempty"`
	StartedAt  string `json:"startedAt"` // RFC 3339, UTC, microseconds
	DurationUS int64  `json:"durationUs"`
	Outcome    string `json:"outcome"` // "ok" or "error"
	ErrorCode  string `json:"errorCode,omitempty"`
	ArgsBytes  int    `json:"argsBytes"`
	// ResultBytes is the size of the encoded result (0 for a failed call).
	ResultBytes int `json:"resultBytes"`
}

// traceParams are the query parameters of GET /api/traces.
var traceParams = []string{"tool", "source", "session", "workspace", "outcome", "limit", "cursor"}

func (h *handler) traces(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Request-Id", errs.NewRequestID())
	if h.st == nil {
		h.fail(w, 0, errs.E(errs.Unavailable, "traces are not stored by this server"))
		return
	}
	q := r.URL.Query()
	for p := range q {
		if !slices.Contains(traceParams, p) {
			// A misspelt filter would otherwise return every trace.
			h.fail(w, 0, errs.Invalid(p, "is not a parameter of /api/traces; the parameters are %s", strings.Join(traceParams, ", ")))
			return
		}
	}
	for _, p := range traceParams {
		if len(q[p]) > 1 {
			h.fail(w, 0, errs.Invalid(p, "is given %d times; give it at most once", len(q[p])))
			return
		}
	}
	f := trace.Filter{Tool: q.Get("tool"), Source: q.Get("source"), Session: q.Get("session"),
		Workspace: q.Get("workspace"), Outcome: q.Get("outcome"), Cursor: q.Get("cursor")}
	// A user who is not an admin sees their own calls only.
	if u, ok := users.FromContext(r.Context()); ok && !u.Principal().Admin() {
		f.User = u.ID
	}
	if s := q.Get("limit"); s != "" || q.Has("limit") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > trace.MaxLimit {
			h.fail(w, 0, errs.Invalid("limit", "must be an integer from 1 to %d, got %q", trace.MaxLimit, s))
			return
		}
		f.Limit = n
	}
	recs, next, err := trace.Query(r.Context(), h.st, h.key, f)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	page := TracePage{Items: make([]TraceItem, 0, len(recs)), NextCursor: next, HasMore: next != ""}
	for _, rec := range recs {
		page.Items = append(page.Items, TraceItem{
			RequestID: rec.RequestID, Name: rec.Name(), Toolbox: rec.Toolbox, Server: rec.Server, Tool: rec.Tool,
			Source: rec.Source, Surface: rec.Surface, SessionID: rec.SessionID, Workspace: rec.Workspace, UserID: rec.UserID,
			StartedAt:  rec.StartedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
			DurationUS: rec.Duration.Microseconds(), Outcome: rec.Outcome, ErrorCode: rec.ErrorCode,
			ArgsBytes: rec.ArgsBytes, ResultBytes: rec.ResultBytes,
		})
	}
	writeJSON(w, http.StatusOK, page)
}
