// Package sdklog adapts Nexus's logger to what the MCP SDK logs: session
// lifecycle at Debug (session ids stay out of the Info log) and a peer going
// away at Debug rather than as an error.
package sdklog

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// New returns the logger to give the MCP SDK (mcp.ServerOptions.Logger,
// mcp.StreamableHTTPOptions.Logger) on any transport. It logs through l, but
//
//   - what the SDK logs at Info or below goes to Debug: session lifecycle
//     ("server session connected", with the session id, which must not
//     reach the log at Info);
//   - a Warn or Error caused by a peer that went away (context canceled,
//     EOF, connection closed or reset, broken pipe) goes to Debug: a client
//     closing a stream or a connection is normal.
//
// Other warnings and errors keep their level.
func New(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(sdkHandler{l.Handler()})
}

type sdkHandler struct{ h slog.Handler }

func (s sdkHandler) Enabled(ctx context.Context, level slog.Level) bool {
	if level < slog.LevelWarn {
		return s.h.Enabled(ctx, slog.LevelDebug)
	}
	// A warning or error may yet turn out to be a disconnect, logged at Debug.
	return s.h.Enabled(ctx, level) || s.h.Enabled(ctx, slog.LevelDebug)
}

func (s sdkHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn || peerGone(r) {
		r.Level = min(r.Level, slog.LevelDebug)
	}
	if !s.h.Enabled(ctx, r.Level) {
		return nil
	}
	return s.h.Handle(ctx, r)
}

func (s sdkHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sdkHandler{s.h.WithAttrs(attrs)}
}

func (s sdkHandler) WithGroup(name string) slog.Handler { return sdkHandler{s.h.WithGroup(name)} }

// goneErrors are the errors of a peer that went away.
var goneErrors = []error{context.Canceled, io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe, net.ErrClosed,
	syscall.EPIPE, syscall.ECONNRESET, http.ErrAbortHandler, mcp.ErrConnectionClosed}

// goneTexts are the same errors as the SDK formats them into messages.
var goneTexts = []string{"context canceled", "EOF", "connection closed", "client is closing", "server is closing",
	"session is closed", "broken pipe", "connection reset by peer", "use of closed network connection", "stream closed"}

// peerGone reports whether r reports an error caused by a peer that went
// away, in an error attribute or in the message.
func peerGone(r slog.Record) bool {
	gone := isGoneText(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve()
		if err, ok := v.Any().(error); ok && v.Kind() == slog.KindAny {
			for _, target := range goneErrors {
				if errors.Is(err, target) {
					gone = true
				}
			}
			gone = gone || isGoneText(err.Error())
		} else if v.Kind() == slog.KindString {
			gone = gone || isGoneText(v.String())
		}
		return !gone
	})
	return gone
}

func isGoneText(s string) bool {
	for _, t := range goneTexts {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}
