package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// ErrorBody is the one error shape of Nexus's HTTP front and REST surface:
// {"error": ErrorDetail}, where ErrorDetail is Tutor Nexus ADR-012's
// ErrorResponse (code, message, details, requestId) plus the offending field.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is ADR-012's ErrorResponse plus field.
type ErrorDetail struct {
	Code      errs.Code     `json:"code"`
	Message   string        `json:"message"`
	Details   *ErrorDetails `json:"details,omitempty"`
	RequestID string        `json:"requestId"`
	// Field names the offending parameter or argument, when there is one.
	Field string `json:"field,omitempty"`
}

// ErrorDetails are ADR-012's optional details.
type ErrorDetails struct {
	Reason     string `json:"reason,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
}

// WriteError writes e as [ErrorBody] with status. The request id is the
// response's X-Request-Id header, set to a new id when absent. e.Message is
// shown as it is: hide internal causes before. A RetryAfter also sets the
// Retry-After header.
func WriteError(w http.ResponseWriter, status int, e *errs.Error) {
	hdr := w.Header()
	id := hdr.Get("X-Request-Id")
	if id == "" {
		id = NewRequestID()
		hdr.Set("X-Request-Id", id)
	}
	d := ErrorDetail{Code: e.Code, Message: e.Message, RequestID: id, Field: e.Field}
	if e.Reason != "" || e.RetryAfter > 0 {
		d.Details = &ErrorDetails{Reason: e.Reason, RetryAfter: e.RetryAfter}
	}
	if e.RetryAfter > 0 {
		hdr.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	b, err := json.Marshal(ErrorBody{Error: d})
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
