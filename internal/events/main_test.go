package events_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: a bus
// ends every goroutine it starts when it is closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
