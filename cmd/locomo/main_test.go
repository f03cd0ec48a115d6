package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestAbsentData: without the benchmark the command says so and succeeds.
func TestAbsentData(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-data", t.TempDir()}, &out, &errOut); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(out.String(), "is absent: nothing to measure") {
		t.Errorf("no notice: %q", out.String())
	}
}

// TestBadFlags: a bad cut-off is refused.
func TestBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, args := range [][]string{{"-k", "0"}, {"-k", "x"}, {"-limit", "-1"}, {"extra"}, {"-only", "grep"}, {"-db", "mysql://x"}} {
		if err := run(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
