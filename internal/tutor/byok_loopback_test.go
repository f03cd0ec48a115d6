package tutor

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/secrets"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestBYOKLoopbackRefusalNamesTheVariable: a base URL on a loopback host,
// refused because the server does not allow them, says how to allow them
// (NEXUS_ALLOW_LOOPBACK_MODEL_URLS=1); other internal addresses, which no
// setting allows, do not point there.
func TestBYOKLoopbackRefusalNamesTheVariable(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newBYOKEnv(t, st, secrets.New())
		for _, base := range []string{"http://127.0.0.1:11434/v1", "https://localhost:8443", "https://[::1]/v1"} {
			_, err := e.call(alice, "tn_user_byok_add", `{"provider":"openai","label":"x","apiKey":"`+aliceKey+`","baseUrl":"`+base+`"}`)
			if err == nil || err.Code != errs.BadRequest || !strings.Contains(err.Message, "NEXUS_ALLOW_LOOPBACK_MODEL_URLS=1") {
				t.Errorf("%s: %v, want BAD_REQUEST naming NEXUS_ALLOW_LOOPBACK_MODEL_URLS=1", base, err)
			}
		}
		_, err := e.call(alice, "tn_user_byok_add", `{"provider":"openai","label":"x","apiKey":"`+aliceKey+`","baseUrl":"https://10.0.0.1/v1"}`)
		if err == nil || strings.Contains(err.Message, "NEXUS_ALLOW_LOOPBACK_MODEL_URLS") {
			t.Errorf("a private address: %v; no setting allows it", err)
		}
	})
}
