// Package webui is Nexus's web front end (SPEC section 2): the chat, a tool
// browser, the traces and the user's settings. Its sources are in web/
// (TypeScript and Preact, see web/README.md); Vite builds them into dist/,
// which is committed and embedded in the binary, so users never run a build
// and nothing is fetched from elsewhere. It speaks only Nexus's public
// surfaces: the WebSocket chat at /ws and the REST API.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed dist
var dist embed.FS

// Prefix is where the assets are served; the page itself is served at /.
const Prefix = "/ui/"

// assetsPrefix holds the built files whose names carry a hash of their
// content: they never change, so browsers may keep them.
const assetsPrefix = Prefix + "assets/"

// Handler serves the page (for / and any path outside Prefix) and the
// built files under Prefix.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(sub))
	page, _ := fs.ReadFile(sub, "index.html")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		if strings.HasPrefix(r.URL.Path, Prefix) {
			if strings.HasPrefix(r.URL.Path, assetsPrefix) {
				h.Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				h.Set("Cache-Control", "no-cache")
			}
			files.ServeHTTP(w, r)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		w.Write(page)
	})
}

// WantsPage reports whether a GET of / asks for the page (a browser) rather
// than the JSON index of endpoints.
func WantsPage(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
