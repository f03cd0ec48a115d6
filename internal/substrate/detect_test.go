package substrate

import (
	"testing"

	"github.com/nexus-mcp/nexus/internal/tension"
)

// TestDetectTensionAdapter checks that the substrate's names are the
// detector's: the rules themselves are tested in internal/tension.
func TestDetectTensionAdapter(t *testing.T) {
	in := func(content string) TensionInput {
		return TensionInput{Content: content, DomainPath: []string{"tech", "nexus"}, Confidence: 0.7}
	}
	tests := []struct {
		a, b string
		want string // "" = no tension
	}{
		{"Nexus supports Windows", "Nexus does not support Windows", TensionTypeContradiction},
		{"Nexus 1.0 was released in 2019", "Nexus 1.0 was released in 2021", TensionTypeTemporalConflict},
		{"Nexus stores belief embeddings in pgvector", "Nexus stores belief embeddings in Qdrant", TensionTypePartialOverlap},
		{"Go modules are cached in GOPATH", "The Go team meets on Mondays", ""},
	}
	for _, tc := range tests {
		got, ok := DetectTension(in(tc.a), in(tc.b))
		want, wantOK := tension.Detect(in(tc.a), in(tc.b))
		if ok != wantOK || got != want {
			t.Errorf("%q vs %q: adapter %v %+v, detector %v %+v", tc.a, tc.b, ok, got, wantOK, want)
		}
		if got.Type != tc.want {
			t.Errorf("%q vs %q: type %q, want %q (%s)", tc.a, tc.b, got.Type, tc.want, got.Reason)
		}
	}
}
