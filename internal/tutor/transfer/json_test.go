package transfer

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// TestEveryRealRuleRoundTripsThroughJSON: the store keeps rules as JSON, so
// every rule of the real file must decode to what was encoded (a generic
// target such as "sfu:CHIN XXX" did not).
func TestEveryRealRuleRoundTripsThroughJSON(t *testing.T) {
	testtools.ForEachData(t, testEveryRealRuleRoundTripsThroughJSON)
}

func testEveryRealRuleRoundTripsThroughJSON(t *testing.T, d testtools.Data) {
	rows, err := LoadRows(filepath.Join(d.Dir, "langara", "transfers.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range (Parser{Dir: catalog.NewDirectory()}).ParseAll(rows) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", r.Evidence.Reference, err)
		}
		var back Rule
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v\n%s", r.Evidence.Reference, err, b)
		}
		if !reflect.DeepEqual(normalize(r), normalize(back)) {
			t.Fatalf("%s does not round-trip:\n%+v\n%+v", r.Evidence.Reference, r, back)
		}
	}
}

// normalize makes times comparable (monotonic clock and location aside).
func normalize(r Rule) Rule {
	b, _ := json.Marshal(r)
	var out Rule
	json.Unmarshal(b, &out)
	r.EffectiveStart, r.EffectiveEnd, r.Evidence.Accessed = out.EffectiveStart, out.EffectiveEnd, out.Evidence.Accessed
	return r
}
