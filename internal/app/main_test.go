package app_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: Close
// ends every goroutine Open and the App started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
