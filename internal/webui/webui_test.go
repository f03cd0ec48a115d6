package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestWebHandler serves the built page at / with the Content-Security-Policy,
// and the files it names under /ui/, the hashed ones cacheable for good.
func TestWebHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	resp, page := get("/")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "style-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type of / = %q", ct)
	}
	refs := regexp.MustCompile(`(?:src|href)="(/ui/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("the page names %d files under /ui/, want the script, the stylesheet and the icon:\n%s", len(refs), page)
	}
	for _, m := range refs {
		resp, body := get(m[1])
		if resp.StatusCode != http.StatusOK || body == "" {
			t.Errorf("GET %s: %s, %d bytes", m[1], resp.Status, len(body))
		}
		immutable := strings.Contains(resp.Header.Get("Cache-Control"), "immutable")
		if hashed := strings.HasPrefix(m[1], assetsPrefix); immutable != hashed {
			t.Errorf("GET %s: Cache-Control %q", m[1], resp.Header.Get("Cache-Control"))
		}
	}
	if resp, _ := get("/ui/nope.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /ui/nope.js: %s", resp.Status)
	}
}
