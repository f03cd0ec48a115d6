// Package stdio is the MCP stdio transport of Nexus: newline-delimited
// JSON-RPC 2.0 over a reader and a writer (standard input and output).
//
// Unlike the SDK's [mcp.IOTransport], a malformed message does not end the
// connection. Every line is checked before the SDK sees it: it must be valid
// JSON nested at most MaxDepth deep, a JSON object (batches are refused),
// with "jsonrpc": "2.0", an id that is absent, a string or an integer, a
// string method with object params (a request or notification) or a result
// or error with an id (a response). A line that fails is answered with a
// JSON-RPC error, -32700 (parse error) when it is not JSON and -32600
// (invalid request) otherwise, carrying the message's id when it has a valid
// one and null otherwise, and the connection goes on. Only a message longer
// than MaxMessage ends the connection (a line that long cannot be skipped
// without reading it all, and the stream cannot be resynchronized), after
// an error response and a log line saying why.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/jsondepth"
	"github.com/nexus-mcp/nexus/internal/jsonrpcmsg"
)

// Defaults of [Transport].
const (
	// DefaultMaxMessage bounds one message (one line, without its newline).
	DefaultMaxMessage = 4 << 20
	// DefaultMaxDepth bounds the nesting of arrays and objects in a message.
	DefaultMaxDepth = jsondepth.Max
)

// JSON-RPC error codes the transport answers with.
const (
	CodeParseError     = jsonrpcmsg.CodeParseError     // -32700: not JSON
	CodeInvalidRequest = jsonrpcmsg.CodeInvalidRequest // -32600: JSON, but not a JSON-RPC 2.0 message
)

// ErrMessageTooLarge ends a connection whose peer sent a message longer than
// the limit.
var ErrMessageTooLarge = errors.New("message too large")

// Transport is an [mcp.Transport] over newline-delimited JSON-RPC that
// answers malformed messages instead of failing (see the package comment).
type Transport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxMessage bounds one message in bytes; 0 means DefaultMaxMessage.
	MaxMessage int
	// MaxDepth bounds the nesting of a message; 0 means DefaultMaxDepth.
	MaxDepth int
	// Logger receives a line for each refused message; nil discards.
	Logger *slog.Logger
}

// Connect implements [mcp.Transport]. It starts the goroutine that reads
// lines; that goroutine ends at the end of the input (a read of standard
// input cannot be interrupted, so Close does not wait for it).
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &conn{
		w:        t.Writer,
		maxDepth: t.MaxDepth,
		log:      t.Logger,
		frames:   make(chan frame),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
	}
	if c.maxDepth <= 0 {
		c.maxDepth = DefaultMaxDepth
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	max := t.MaxMessage
	if max <= 0 {
		max = DefaultMaxMessage
	}
	c.max = max
	go c.readLines(bufio.NewReaderSize(t.Reader, 64<<10), max)
	return c, nil
}

// frame is one line read, or the error that ended the input.
type frame struct {
	line []byte
	err  error
}

type conn struct {
	w        io.Writer
	max      int
	maxDepth int
	log      *slog.Logger
	frames   chan frame

	writeMu sync.Mutex // one message written at a time

	// pending counts the requests read and not yet answered: at the end of
	// the input Read waits for their answers (at most DrainTimeout), so that
	// "nexus stdio < requests" answers them all.
	pendingMu sync.Mutex
	pending   int
	answered  chan struct{} // signalled when an answer is written

	closeOnce sync.Once
	closed    chan struct{}
}

// readLines splits the input into lines and hands them to Read; it ends at
// the first error (the end of the input, or a line over the limit).
func (c *conn) readLines(r *bufio.Reader, max int) {
	for {
		line, err := readLine(r, max)
		if len(line) > 0 || err == nil {
			select {
			case c.frames <- frame{line: line}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.frames <- frame{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// tooLarge reports a line that exceeded the limit.
type tooLarge struct{ limit int }

func (e tooLarge) Error() string {
	return fmt.Sprintf("message longer than the %d-byte limit", e.limit)
}

func (e tooLarge) Unwrap() error { return ErrMessageTooLarge }

// readLine returns the next line without its line ending ("\n" or "\r\n").
// A last line without a newline is returned with io.EOF; a line longer
// than max is a tooLarge error, and nothing more is read.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		} else if len(line) <= max+1 && errors.Is(err, bufio.ErrBufferFull) {
			continue // max+1: room for the "\r" of "\r\n"
		} else if len(line) <= max+1 {
			line = bytes.TrimSuffix(line, []byte{'\r'}) // the end of the input
		}
		if len(line) > max {
			return nil, tooLarge{max}
		}
		return line, err
	}
}

// Read implements [mcp.Connection]: it returns the next valid message,
// answering every invalid one on the way.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var f frame
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case f = <-c.frames:
		}
		if errors.Is(f.err, io.EOF) {
			c.drain(ctx)
		}
		if f.err != nil {
			var tl tooLarge
			if errors.As(f.err, &tl) {
				c.log.Error("stdio: closing the connection: a message is longer than the limit, and the stream cannot be resynchronized after it",
					"limit_bytes", tl.limit)
				c.writeError(ctx, nil, CodeInvalidRequest, fmt.Sprintf("Invalid Request: message longer than the %d-byte limit; closing the connection", tl.limit))
			}
			return nil, f.err
		}
		if len(bytes.TrimSpace(f.line)) == 0 {
			continue // blank lines separate nothing
		}
		msg, id, code, reason := jsonrpcmsg.Check(f.line, c.maxDepth)
		if msg != nil {
			if r, ok := msg.(*jsonrpc.Request); ok && r.ID.IsValid() {
				c.pendingMu.Lock()
				c.pending++
				c.pendingMu.Unlock()
			}
			return msg, nil
		}
		c.log.Warn("stdio: refused a malformed JSON-RPC message", "code", code, "reason", reason, "id", string(orNull(id)))
		if err := c.writeError(ctx, id, code, reason); err != nil {
			return nil, err
		}
	}
}

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}

// writeError answers a refused message.
func (c *conn) writeError(ctx context.Context, id json.RawMessage, code int, message string) error {
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", orNull(id), wireError{code, message}})
	if err != nil {
		return err
	}
	return c.write(ctx, b)
}

// DrainTimeout bounds how long the end of the input waits for the answers
// of the requests read before it (a cancelled request gets none).
const DrainTimeout = 10 * time.Second

// drain waits until every request read has been answered, ctx ends, or
// DrainTimeout passes.
func (c *conn) drain(ctx context.Context) {
	timeout := time.NewTimer(DrainTimeout)
	defer timeout.Stop()
	for {
		c.pendingMu.Lock()
		n := c.pending
		c.pendingMu.Unlock()
		if n <= 0 {
			return
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-timeout.C:
			c.log.Warn("stdio: end of input with requests still unanswered", "requests", n, "waited", DrainTimeout)
			return
		}
	}
}

// Write implements [mcp.Connection].
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	err = c.write(ctx, b)
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.pendingMu.Lock()
		c.pending--
		c.pendingMu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

// write writes one message and its newline, under the write lock.
func (c *conn) write(ctx context.Context, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// Close implements [mcp.Connection]. It unblocks Read; it closes neither
// the reader nor the writer (standard input and output belong to the
// process).
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements [mcp.Connection]: stdio has no session id.
func (c *conn) SessionID() string { return "" }
