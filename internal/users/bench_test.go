package users_test

import (
	"context"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/users"
)

// BenchmarkAuthenticate is the cost a bearer token adds to an HTTP request:
// one indexed read on SQLite (the last use is written at most once a
// minute).
func BenchmarkAuthenticate(b *testing.B) {
	st := storetest.OpenBench(b, store.SQLite, "users")
	u := users.New(st)
	ctx := context.Background()
	_, tok, err := u.Add(ctx, "bench", users.Free, principal.Member, "")
	if err != nil { // kept from an earlier run
		b.Logf("add: %v", err)
		tok, _, err = u.AddToken(ctx, "bench", "")
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := u.Authenticate(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
