package events

import (
	"context"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/nexus-mcp/nexus/internal/store"
)

// maxNotify is PostgreSQL's limit on a NOTIFY payload, less a margin.
const maxNotify = 7900

// postgres carries events over PostgreSQL LISTEN/NOTIFY on a channel of the
// store's schema: replicas sharing the schema share the channel.
type postgres struct {
	st        *store.Store
	channel   string
	log       *slog.Logger
	listening atomic.Bool
}

func newPostgres(ctx context.Context, st *store.Store, log *slog.Logger) (*postgres, error) {
	var schema string
	if err := st.DB().QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, fmt.Errorf("events: postgres: %w", err)
	}
	return &postgres{st: st, channel: PostgresChannel(schema), log: log}, nil
}

// PostgresChannel is the LISTEN/NOTIFY channel of the replicas whose store
// is PostgreSQL schema schema (channels are per database, schemas share
// them).
func PostgresChannel(schema string) string {
	h := fnv.New64a()
	h.Write([]byte(schema))
	return fmt.Sprintf("nexus_events_%016x", h.Sum64())
}

func (p *postgres) name() string { return "postgres" }

func (p *postgres) publish(ctx context.Context, payload []byte) error {
	if len(payload) > maxNotify {
		return fmt.Errorf("event of %d bytes is over PostgreSQL's NOTIFY limit of %d", len(payload), maxNotify)
	}
	_, err := p.st.DB().ExecContext(ctx, `SELECT pg_notify($1, $2)`, p.channel, string(payload))
	return err
}

// run listens on a connection of its own, reconnecting with a growing
// pause (up to 5 s) when the connection fails.
func (p *postgres) run(ctx context.Context, deliver func([]byte), connected func(again bool)) {
	pause := 100 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := p.listen(ctx, deliver, func() {
			pause = 100 * time.Millisecond
			connected(!first)
			first = false
		})
		p.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		p.log.Warn("events: the PostgreSQL listener lost its connection; reconnecting", "err", err, "pause", pause)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func (p *postgres) listen(ctx context.Context, deliver func([]byte), connected func()) error {
	conn, err := p.st.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		if _, err := pc.Exec(ctx, `LISTEN `+p.channel); err != nil {
			return err
		}
		p.listening.Store(true)
		connected()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				// The connection listens: never hand it back to the pool.
				return fmt.Errorf("%w (%w)", driver.ErrBadConn, err)
			}
			deliver([]byte(n.Payload))
		}
	})
}

func (p *postgres) ready(ctx context.Context) error {
	if !p.listening.Load() {
		return fmt.Errorf("the PostgreSQL event listener is not connected")
	}
	return nil
}

func (p *postgres) close() {}

func (p *postgres) max() int { return maxNotify }
