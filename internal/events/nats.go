package events

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// natsEngine carries events over NATS core publish/subscribe on the subject
// <prefix>.events.
type natsEngine struct {
	nc      *nats.Conn
	subject string
	log     *slog.Logger
	// reconnected is signalled by NATS's reconnect handler, on its own
	// goroutine, for run.
	reconnected chan struct{}
	subscribed  atomic.Bool
}

// flushTimeout bounds one wait for the NATS server to confirm the
// subscription.
const flushTimeout = 10 * time.Second

func newNATS(raw string, log *slog.Logger) (*natsEngine, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("events: %q: %w", raw, err)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix == "" {
		prefix = "nexus"
	}
	u.Path = ""
	e := &natsEngine{subject: prefix + ".events", log: log, reconnected: make(chan struct{}, 1)}
	nc, err := nats.Connect(u.String(), nats.Name("nexus"), nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("events: disconnected from NATS; reconnecting", "err", err)
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case e.reconnected <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		return nil, fmt.Errorf("events: connect to NATS at %s: %w", u.Redacted(), err)
	}
	e.nc = nc
	return e, nil
}

func (e *natsEngine) name() string { return "nats" }

func (e *natsEngine) publish(ctx context.Context, payload []byte) error {
	return e.nc.Publish(e.subject, payload)
}

func (e *natsEngine) run(ctx context.Context, deliver func([]byte), connected func(again bool)) {
	msgs := make(chan *nats.Msg, 4096)
	sub, err := e.nc.ChanSubscribe(e.subject, msgs)
	if err != nil {
		e.log.Error("events: subscribe to NATS", "subject", e.subject, "err", err)
		return
	}
	defer sub.Unsubscribe()
	// The subscription is in place once the server has it: a flush, whose
	// context must have a deadline (NATS refuses one without at once). The
	// bus is not ready before; a server that does not answer is retried.
	for {
		fctx, cancel := context.WithTimeout(ctx, flushTimeout)
		err := e.nc.FlushWithContext(fctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		e.log.Warn("events: flush the NATS subscription; trying again", "err", err)
	}
	e.subscribed.Store(true)
	connected(false)
	for {
		select {
		case m := <-msgs:
			deliver(m.Data)
		case <-e.reconnected:
			connected(true)
		case <-ctx.Done():
			return
		}
	}
}

func (e *natsEngine) ready(ctx context.Context) error {
	if !e.subscribed.Load() || !e.nc.IsConnected() {
		return fmt.Errorf("not connected to NATS (%s)", e.nc.Status())
	}
	return nil
}

func (e *natsEngine) close() { e.nc.Close() }

func (e *natsEngine) max() int { return int(e.nc.MaxPayload()) }
