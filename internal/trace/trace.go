// Package trace records every tool call (SPEC section 5, "Tracing").
//
// The pipeline hands each finished call to a [Writer], which batches records
// into the store off the request path, so tracing costs a channel send per
// call rather than a database round trip. [Writer.Close] flushes what is
// buffered.
package trace

import (
	"context"
	"database/sql"
	"log/slog"
	"math/bits"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
)

// Record is one traced call.
type Record struct {
	RequestID string `json:"request_id"`
	Surface   string `json:"surface"`
	Toolbox   string `json:"toolbox"`
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	Source    string `json:"source"`
	SessionID string `json:"session_id,omitempty"`
	Workspace string `json:"workspace"`
	// UserID is the user the call acted as.
	UserID      string        `json:"user_id,omitempty"`
	StartedAt   time.Time     `json:"started_at"`
	Duration    time.Duration `json:"-"`
	Outcome     string        `json:"outcome"` // "ok" or "error"
	ErrorCode   string        `json:"error_code,omitempty"`
	ArgsBytes   int           `json:"args_bytes"`
	ResultBytes int           `json:"result_bytes"`
}

// Outcomes of a call.
const (
	OK    = "ok"
	Error = "error"
)

const (
	bufferSize = 4096
	batchSize  = 256
	// lingerTime is how long the writer waits for more records before it
	// commits a batch (a flush request commits at once): a call's trace is
	// stored within about this long. Every commit writes SQLite's WAL
	// frames of every changed page; in BenchmarkOverheadNexus (7,000-9,700
	// calls/s) commits were about a third of tracing's CPU with 5 ms, and
	// took about half as much CPU with 20 ms.
	lingerTime = 20 * time.Millisecond
)

// Writer batches records into the store. It is safe for concurrent use.
type Writer struct {
	st   *store.Store
	log  *slog.Logger
	ch   chan item
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	dropped int64

	// Of the loop's goroutine alone: the INSERT statement of 1<<k rows,
	// prepared (or not preparable), and the arguments of one.
	stmts      [insertSizes]*sql.Stmt
	unprepared [insertSizes]bool
	args       []any
}

// insertSizes is the number of INSERT statements, of 1, 2, 4, ...,
// rowsPerInsert rows.
const insertSizes = 7

// item is a record to store or, when ack is set, a flush request.
type item struct {
	rec Record
	ack chan struct{}
}

// NewWriter starts a writer over st.
func NewWriter(st *store.Store, log *slog.Logger) *Writer {
	w := &Writer{st: st, log: log, ch: make(chan item, bufferSize), done: make(chan struct{})}
	go w.loop()
	return w
}

// Record queues r. If the buffer is full (the database is far behind), the
// caller waits up to 100 ms and then the record is dropped and counted, so a
// stalled database never stalls tool calls indefinitely.
func (w *Writer) Record(r Record) {
	select {
	case w.ch <- item{rec: r}:
		return
	default:
	}
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case w.ch <- item{rec: r}:
	case <-t.C:
		w.mu.Lock()
		w.dropped++
		w.mu.Unlock()
		w.log.Warn("trace buffer full; record dropped", "tool", r.Tool)
	}
}

// Dropped returns the number of records dropped so far.
func (w *Writer) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}

// Flush blocks until every record queued before the call is stored.
func (w *Writer) Flush() {
	ack := make(chan struct{})
	w.ch <- item{ack: ack}
	<-ack
}

// Close stops accepting records and flushes the buffer.
func (w *Writer) Close() {
	w.once.Do(func() { close(w.ch) })
	<-w.done
}

func (w *Writer) loop() {
	defer close(w.done)
	defer func() {
		for _, stmt := range w.stmts {
			if stmt != nil {
				stmt.Close()
			}
		}
	}()
	batch := make([]Record, 0, batchSize)
	var acks []chan struct{}
	take := func(it item) {
		if it.ack != nil {
			acks = append(acks, it.ack)
			return
		}
		batch = append(batch, it.rec)
	}
	for it := range w.ch {
		take(it)
		// Gather what arrives within a short linger, up to a batch, so that
		// under load one commit carries many records.
		linger := time.NewTimer(lingerTime)
	gather:
		for len(batch) < batchSize && len(acks) == 0 {
			select {
			case it, ok := <-w.ch:
				if !ok {
					break gather
				}
				take(it)
			case <-linger.C:
				break gather
			}
		}
		linger.Stop()
		w.write(batch)
		batch = batch[:0]
		for _, a := range acks {
			close(a)
		}
		acks = acks[:0]
	}
}

// rowsPerInsert is how many records one INSERT statement carries at most:
// one statement per row cost a statement's work per row (a database/sql round
// trip, and in SQLite the AUTOINCREMENT sequence read and written again),
// which was most of tracing's CPU per call. A batch is inserted in
// statements of 64, 32, ..., 1 rows, each prepared once.
const rowsPerInsert = 64

// traceColumns is the number of columns of a trace row.
const traceColumns = 15

func (w *Writer) write(batch []Record) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := w.st.Tx(ctx, func(tx *sql.Tx) error {
		for rest := batch; len(rest) > 0; {
			k := bits.Len(uint(min(len(rest), rowsPerInsert))) - 1 // 1<<k rows
			rows := rest[:1<<k]
			rest = rest[1<<k:]
			w.args = w.args[:0]
			for _, r := range rows {
				w.args = append(w.args, r.RequestID, r.Surface, r.Toolbox, r.Server, r.Tool, r.Source,
					nullable(r.SessionID), r.Workspace, store.Micros(r.StartedAt), r.Duration.Microseconds(),
					r.Outcome, nullable(r.ErrorCode), r.ArgsBytes, r.ResultBytes, nullable(r.UserID))
			}
			var err error
			if stmt := w.prepared(ctx, k); stmt != nil {
				_, err = tx.StmtContext(ctx, stmt).ExecContext(ctx, w.args...)
			} else {
				_, err = tx.ExecContext(ctx, w.insert(1<<k), w.args...)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	clear(w.args) // keep no record's strings alive until the next batch
	if err != nil {
		w.log.Error("write traces", "records", len(batch), "err", err)
	}
}

// prepared is the INSERT statement of 1<<k rows prepared on the store, nil
// when it could not be prepared (the statement's text is executed then).
func (w *Writer) prepared(ctx context.Context, k int) *sql.Stmt {
	if w.stmts[k] == nil && !w.unprepared[k] {
		stmt, err := w.st.DB().PrepareContext(ctx, w.insert(1<<k))
		if err != nil {
			w.unprepared[k] = true
			return nil
		}
		w.stmts[k] = stmt
	}
	return w.stmts[k]
}

// insert is the INSERT statement of n rows.
func (w *Writer) insert(n int) string {
	var b strings.Builder
	b.WriteString("INSERT ")
	if w.st.Dialect() == store.SQLite {
		// FAIL, not the default ABORT: a statement of many rows that may
		// abort makes SQLite keep a statement journal of every page it
		// changes, to undo the statement alone. Any error here fails the
		// whole transaction, which rolls back as a whole either way.
		b.WriteString("OR FAIL ")
	}
	b.WriteString(`INTO traces
		(request_id, surface, toolbox, server, tool, source, session_id, workspace,
		 started_at, duration_us, outcome, error_code, args_bytes, result_bytes, user_id)
		VALUES `)
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", traceColumns), ", ") + ")"
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return w.st.Q(b.String())
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
