package errs_test

import (
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
