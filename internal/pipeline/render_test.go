package pipeline_test

import (
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestTutorErrorWire pins the tutor family's error body byte for byte:
// ADR-012's ErrorResponse {"code","message","details"?,"requestId"}, never a
// field (even when the error names one), details only when set.
func TestTutorErrorWire(t *testing.T) {
	tutor := &registry.Tool{Family: registry.Tutor}
	for _, tt := range []struct {
		err  *errs.Error
		want string
	}{
		{&errs.Error{Code: errs.NotFound, Message: "course x not found"},
			`{"code":"NOT_FOUND","message":"course x not found","requestId":"R1"}`},
		{&errs.Error{Code: errs.BadRequest, Message: "limit: bad", Field: "limit"},
			`{"code":"BAD_REQUEST","message":"limit: bad","requestId":"R1"}`},
		{&errs.Error{Code: errs.NotFound, Message: "m", Reason: "unknown_course"},
			`{"code":"NOT_FOUND","message":"m","details":{"reason":"unknown_course"},"requestId":"R1"}`},
		{&errs.Error{Code: errs.RateLimited, Message: "slow", RetryAfter: 3, Field: "x"},
			`{"code":"RATE_LIMITED","message":"slow","details":{"retryAfter":3},"requestId":"R1"}`},
		{&errs.Error{Code: errs.Unavailable, Message: "m", Reason: "r", RetryAfter: 5},
			`{"code":"SERVICE_UNAVAILABLE","message":"m","details":{"reason":"r","retryAfter":5},"requestId":"R1"}`},
	} {
		o := &pipeline.Outcome{Tool: tutor, RequestID: "R1", Err: tt.err}
		body, isErr := o.Body()
		if !isErr || string(body) != tt.want || !o.IsJSON() {
			t.Errorf("%+v:\n got %s (isError %v)\nwant %s", tt.err, body, isErr, tt.want)
		}
	}
}
