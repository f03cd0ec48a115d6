package errs

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/oklog/ulid/v2"
)

// Body is the one error shape of Nexus's HTTP front and REST surface:
// {"error": Response}, Tutor Nexus ADR-012's ErrorResponse (code, message,
// details, requestId) plus the offending field.
type Body struct {
	Error Response `json:"error"`
}

// Write writes e as [Body] with status. The request id is the
// response's X-Request-Id header, set to a new id when absent. e.Message is
// shown as it is: hide internal causes before. A RetryAfter also sets the
// Retry-After header.
func Write(w http.ResponseWriter, status int, e *Error) {
	hdr := w.Header()
	id := hdr.Get("X-Request-Id")
	if id == "" {
		id = NewRequestID()
		hdr.Set("X-Request-Id", id)
	}
	d := e.Response(id)
	d.Field = e.Field
	if e.RetryAfter > 0 {
		hdr.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	b, err := json.Marshal(Body{Error: d})
	if err != nil { // cannot happen: the shape always marshals
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL_ERROR","message":"encode error","requestId":"`+id+`"}}`)
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// NewRequestID returns a new request id (a ULID, like the pipeline's), for
// responses that run no call.
func NewRequestID() string { return ulid.Make().String() }
