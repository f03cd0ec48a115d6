package errs_test

import (
	"net/http/httptest"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// TestWriteErrorWire pins the REST/front error body byte for byte:
// {"error":{"code","message","details"?,"requestId","field"?}}.
func TestWriteErrorWire(t *testing.T) {
	for _, tt := range []struct {
		err  *errs.Error
		want string
	}{
		{&errs.Error{Code: errs.NotFound, Message: "no such endpoint"},
			`{"error":{"code":"NOT_FOUND","message":"no such endpoint","requestId":"R1"}}`},
		{&errs.Error{Code: errs.BadRequest, Message: "limit: bad", Field: "limit"},
			`{"error":{"code":"BAD_REQUEST","message":"limit: bad","requestId":"R1","field":"limit"}}`},
		{&errs.Error{Code: errs.RateLimited, Message: "slow", Reason: "busy", RetryAfter: 3, Field: "x"},
			`{"error":{"code":"RATE_LIMITED","message":"slow","details":{"reason":"busy","retryAfter":3},"requestId":"R1","field":"x"}}`},
		{&errs.Error{Code: errs.NotFound, Message: "m", Reason: "unknown_course"},
			`{"error":{"code":"NOT_FOUND","message":"m","details":{"reason":"unknown_course"},"requestId":"R1"}}`},
	} {
		rec := httptest.NewRecorder()
		rec.Header().Set("X-Request-Id", "R1")
		errs.Write(rec, 400, tt.err)
		if got := rec.Body.String(); got != tt.want+"\n" {
			t.Errorf("%+v:\n got %s\nwant %s", tt.err, got, tt.want)
		}
	}
}
