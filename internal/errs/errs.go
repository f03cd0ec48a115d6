// Package errs holds Nexus's one internal error type.
//
// Every failure a tool call can meet, from schema validation to a missing
// belief, is an [*Error] carrying a [Code] from Tutor Nexus ADR-012's table.
// Surfaces never decide what an error looks like: they hand the error to the
// pipeline's renderer, which shapes it per tool family (see SPEC section 5).
package errs

import (
	"errors"
	"fmt"
)

// Code is an error class from ADR-012's table.
type Code string

// The ADR-012 error codes.
const (
	BadRequest          Code = "BAD_REQUEST"
	Unauthorized        Code = "UNAUTHORIZED"
	Forbidden           Code = "FORBIDDEN"
	NotFound            Code = "NOT_FOUND"
	Conflict            Code = "CONFLICT"
	UnprocessableEntity Code = "UNPROCESSABLE_ENTITY"
	RateLimited         Code = "RATE_LIMITED"
	Internal            Code = "INTERNAL_ERROR"
	Unavailable         Code = "SERVICE_UNAVAILABLE"
)

// Error is the error type of every tool call failure.
type Error struct {
	// Code classifies the error; errors.Is compares codes (see [Error.Is]).
	Code Code
	// Op names the operation that failed, such as "belief_get".
	Op string
	// Message is the human-readable text shown to callers.
	Message string
	// Field names the offending argument, when there is one ("confidence.overall").
	Field string
	// Reason, RetryAfter and Limit are ADR-012's optional details.
	Reason     string
	RetryAfter int
	Limit      *QuotaLimit
	// Err is the wrapped cause; it is never shown to callers.
	Err error
}

// E builds an error of the given code with a formatted message.
func E(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an INTERNAL_ERROR for op that wraps cause. If cause already is
// an [*Error] it is returned unchanged, so wrapping twice keeps the first code.
func Wrap(op string, cause error) error {
	if cause == nil {
		return nil
	}
	var e *Error
	if errors.As(cause, &e) {
		return cause
	}
	return &Error{Code: Internal, Op: op, Message: "internal error", Err: cause}
}

// Error implements error.
func (e *Error) Error() string {
	msg := e.Message
	if e.Op != "" {
		msg = e.Op + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an [*Error] with the same code and no message,
// so that errors.Is(err, errs.Kind(errs.NotFound)) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Message == "" && t.Code == e.Code
}

// Kind returns a sentinel for errors.Is comparisons by code.
func Kind(c Code) error { return &Error{Code: c} }

// From returns err as an [*Error], turning any other error into INTERNAL_ERROR.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Err: err}
}

// CodeOf returns the code of err, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return From(err).Code
}

// Invalid is a BAD_REQUEST naming the field at fault.
func Invalid(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{Code: BadRequest, Message: msg, Field: field}
}

// Missing is a NOT_FOUND for a kind of object and its id.
func Missing(kind, id string) *Error {
	return &Error{Code: NotFound, Message: fmt.Sprintf("%s %q not found", kind, id)}
}

// Response is an error's body on the wire, the one type for it: Tutor Nexus
// ADR-012's ErrorResponse {"code", "message", "details"?, "requestId"}, plus
// "field"? naming the offending parameter or argument. The tutor family's
// tool errors are the bare Response (Field left empty, so never sent); the
// REST surface and the HTTP front send it, with Field, under "error".
type Response struct {
	Code      Code             `json:"code"`
	Message   string           `json:"message"`
	Details   *ResponseDetails `json:"details,omitempty"`
	RequestID string           `json:"requestId"`
	// Field names the offending parameter or argument, when there is one.
	Field string `json:"field,omitempty"`
}

// ResponseDetails are ADR-012's optional details.
type ResponseDetails struct {
	Reason     string      `json:"reason,omitempty"`
	RetryAfter int         `json:"retryAfter,omitempty"`
	Limit      *QuotaLimit `json:"limit,omitempty"`
}

// QuotaLimit is ADR-012's quota detail of a RATE_LIMITED error: how much of
// the limit is used, the limit, and its window ("day", "minute").
type QuotaLimit struct {
	Current float64 `json:"current"`
	Max     float64 `json:"max"`
	Window  string  `json:"window"`
}

// Response returns e's [Response] for the call requestID: its code, message
// and details (when it has a reason, a retry delay or a quota), without the field,
// which a surface that shows it sets.
func (e *Error) Response(requestID string) Response {
	r := Response{Code: e.Code, Message: e.Message, RequestID: requestID}
	if e.Reason != "" || e.RetryAfter > 0 || e.Limit != nil {
		r.Details = &ResponseDetails{Reason: e.Reason, RetryAfter: e.RetryAfter, Limit: e.Limit}
	}
	return r
}
