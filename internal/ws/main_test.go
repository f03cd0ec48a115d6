package ws_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// goroutine of a connection ends with it, and Wait's with its call.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
