package ws_test

import (
	"net/http"

	"github.com/nexus-mcp/nexus/internal/users"
)

// localUser makes every request act as the local user, as the HTTP front
// does on a loopback listener.
func localUser(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(users.WithUser(r.Context(), &users.Local)))
	})
}
