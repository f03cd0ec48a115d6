package sdklog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestSDKLoggerLevels(t *testing.T) {
	var buf strings.Builder
	log := New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	log.Info("server session connected", "session_id", "S1")
	log.Error("server session ended with error", "error", fmt.Errorf("read: %w", io.EOF))
	log.Error("server run cancelled", "error", context.Canceled)
	log.Warn("Writing close event: write tcp: broken pipe")
	log.Error("jsonrpc2 internal error", "error", errors.New("something real"))
	log.Warn("keepalive ping failed; tolerating below threshold", "error", errors.New("timeout"))
	out := buf.String()
	for _, hidden := range []string{"S1", "ended with error", "cancelled", "broken pipe"} {
		if strings.Contains(out, hidden) {
			t.Errorf("logged at Info or above: %q\n%s", hidden, out)
		}
	}
	for _, kept := range []string{"level=ERROR msg=\"jsonrpc2 internal error\"", "level=WARN msg=\"keepalive ping failed"} {
		if !strings.Contains(out, kept) {
			t.Errorf("missing %q\n%s", kept, out)
		}
	}
	buf.Reset()
	debug := New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	debug.With("k", "v").Info("server session connected", "session_id", "S2")
	debug.Error("server run cancelled", "error", context.Canceled)
	if !strings.Contains(buf.String(), `level=DEBUG msg="server session connected" k=v session_id=S2`) ||
		!strings.Contains(buf.String(), `level=DEBUG msg="server run cancelled"`) {
		t.Errorf("at Debug:\n%s", buf.String())
	}
}
