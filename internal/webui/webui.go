// Package webui is Nexus's web front end (SPEC section 2): the chat, a tool
// browser, the traces and the user's settings, as plain HTML, CSS and
// JavaScript embedded in the binary (no build step, nothing fetched from
// elsewhere). It speaks only Nexus's public surfaces: the WebSocket chat at
// /ws and the REST API.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is where the assets are served; the page itself is served at /.
const Prefix = "/ui/"

// Handler serves the page (for / and any path outside Prefix) and the
// assets under Prefix.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
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
			h.Set("Cache-Control", "no-cache")
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
