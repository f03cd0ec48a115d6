package events

import "context"

// local delivers events within the process: one replica (SQLite).
type local struct {
	ch   chan []byte
	done chan struct{}
}

func newLocal() *local { return &local{ch: make(chan []byte, 1024), done: make(chan struct{})} }

func (l *local) name() string { return "local" }

func (l *local) publish(ctx context.Context, payload []byte) error {
	select {
	case l.ch <- payload:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		return context.Canceled
	}
}

func (l *local) run(ctx context.Context, deliver func([]byte), _ func(bool)) {
	for {
		select {
		case p := <-l.ch:
			deliver(p)
		case <-ctx.Done():
			return
		}
	}
}

func (l *local) ready(context.Context) error { return nil }

func (l *local) close() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
}

func (l *local) max() int { return 0 }
