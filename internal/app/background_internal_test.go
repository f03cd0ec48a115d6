package app

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// TestCloseEndsBackgroundWork: Close cancels the App's own goroutines (the
// reloads other replicas ask for) and waits for them; none starts after.
func TestCloseEndsBackgroundWork(t *testing.T) {
	dir := t.TempDir()
	ignore := goleak.IgnoreCurrent()
	a, err := Open(context.Background(), Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var ended atomic.Bool
	a.background(func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		ended.Store(true)
	})
	<-started
	a.Close()
	if !ended.Load() {
		t.Fatal("Close returned before the background work ended")
	}
	var late atomic.Bool
	a.background(func(context.Context) { late.Store(true) })
	a.bg.Wait()
	if late.Load() {
		t.Fatal("background work started after Close")
	}
	goleak.VerifyNone(t, ignore)
}
