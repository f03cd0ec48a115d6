package errs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
)

func TestKindsCompareByCode(t *testing.T) {
	err := fmt.Errorf("load: %w", errs.Missing("belief", "x"))
	if !errors.Is(err, errs.Kind(errs.NotFound)) || errors.Is(err, errs.Kind(errs.Conflict)) {
		t.Fatal("errors.Is by kind")
	}
	if errs.CodeOf(err) != errs.NotFound || errs.CodeOf(nil) != "" {
		t.Fatal("CodeOf")
	}
	plain := errors.New("disk on fire")
	if e := errs.From(plain); e.Code != errs.Internal || !errors.Is(e, plain) {
		t.Fatalf("From(plain) = %+v", e)
	}
	if w := errs.Wrap("op", errs.Invalid("f", "bad")); errs.CodeOf(w) != errs.BadRequest {
		t.Fatal("Wrap must keep an existing code")
	}
	if e := errs.Invalid("limit", "must be positive"); e.Message != "limit: must be positive" || e.Field != "limit" {
		t.Fatalf("Invalid = %+v", e)
	}
}

// TestResponse: the one error body type carries both wire shapes, the tutor
// family's (no field) and REST's (field when known), details only when set.
func TestResponse(t *testing.T) {
	e := &errs.Error{Code: errs.BadRequest, Message: "limit: bad", Field: "limit", Reason: "r", RetryAfter: 2, Err: errors.New("hidden")}
	r := e.Response("R1")
	b, _ := json.Marshal(r)
	if want := `{"code":"BAD_REQUEST","message":"limit: bad","details":{"reason":"r","retryAfter":2},"requestId":"R1"}`; string(b) != want {
		t.Fatalf("Response = %s, want %s", b, want)
	}
	r.Field = e.Field
	r.Details = nil
	b, _ = json.Marshal(r)
	if want := `{"code":"BAD_REQUEST","message":"limit: bad","requestId":"R1","field":"limit"}`; string(b) != want {
		t.Fatalf("Response with field = %s, want %s", b, want)
	}
	if r := errs.E(errs.NotFound, "x").Response(""); r.Details != nil || r.Field != "" {
		t.Fatalf("no details, no field: %+v", r)
	}
}

// TestResponseLimit: ADR-012's example error response, byte for byte.
func TestResponseLimit(t *testing.T) {
	e := &errs.Error{Code: errs.RateLimited, Message: "Daily prompt limit exceeded", Reason: "User has used 100/100 prompts today",
		RetryAfter: 43200, Limit: &errs.QuotaLimit{Current: 100, Max: 100, Window: "day"}}
	b, _ := json.Marshal(e.Response("01JXYZ123ABC"))
	want := `{"code":"RATE_LIMITED","message":"Daily prompt limit exceeded","details":{"reason":"User has used 100/100 prompts today",` +
		`"retryAfter":43200,"limit":{"current":100,"max":100,"window":"day"}},"requestId":"01JXYZ123ABC"}`
	if string(b) != want {
		t.Fatalf("Response = %s\nwant       %s", b, want)
	}
}
