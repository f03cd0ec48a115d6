package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := []struct {
		name         string
		opts         Options
		host, origin string
		want         int
	}{
		{"loopback host", Options{Loopback: true}, "127.0.0.1:7777", "", 204},
		{"localhost host", Options{Loopback: true}, "localhost:7777", "", 204},
		{"ipv6 loopback", Options{Loopback: true}, "[::1]:7777", "", 204},
		{"rebinding host", Options{Loopback: true}, "evil.example.com", "", 403},
		{"allowed host", Options{Loopback: true, AllowedHosts: []string{"nexus.internal"}}, "nexus.internal:7777", "", 204},
		{"loopback origin", Options{Loopback: true}, "127.0.0.1:7777", "http://localhost:5173", 204},
		{"foreign origin", Options{Loopback: true}, "127.0.0.1:7777", "https://evil.example.com", 403},
		{"null origin", Options{Loopback: true}, "127.0.0.1:7777", "null", 403},
		{"allowed origin", Options{Loopback: true, AllowedOrigins: []string{"https://app.example.com"}}, "127.0.0.1:7777", "https://app.example.com", 204},
		{"allowed host, any case and trailing dot", Options{Loopback: true, AllowedHosts: []string{"Nexus.Internal."}}, "NEXUS.internal.:7777", "", 204},
		{"allowed origin with trailing slash", Options{Loopback: true, AllowedOrigins: []string{"https://app.example.com/"}}, "127.0.0.1:7777", "https://APP.example.com", 204},
		{"same origin as an allowed host", Options{Loopback: true, AllowedHosts: []string{"nexus.internal"}}, "nexus.internal:7777", "http://nexus.internal:7777", 204},
		{"empty host", Options{Loopback: true}, "", "", 403},
		{"public host not allowed", Options{}, "nexus.example.com", "", 403},
		{"public loopback host", Options{}, "localhost:7777", "", 204},
		{"public allowed host", Options{AllowedHosts: []string{"nexus.example.com"}}, "nexus.example.com", "", 204},
		{"public same origin", Options{AllowedHosts: []string{"nexus.example.com"}}, "nexus.example.com", "https://nexus.example.com", 204},
		{"public rebinding: same origin as a host not allowed", Options{AllowedHosts: []string{"nexus.example.com"}}, "attacker.example:7777", "http://attacker.example:7777", 403},
		{"public cross origin", Options{AllowedHosts: []string{"nexus.example.com"}}, "nexus.example.com", "https://evil.example.com", 403},
		{"public loopback origin", Options{AllowedHosts: []string{"nexus.example.com"}}, "nexus.example.com", "http://localhost:5173", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.MaxBodyBytes == 0 {
				tt.opts.MaxBodyBytes = DefaultMaxBodyBytes
			}
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
			req.Host = tt.host
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			guard(tt.opts, ok).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tt.want, rec.Body)
			}
		})
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:7777": true, "localhost:1": true, "[::1]:80": true, "0.0.0.0:7777": false, ":7777": false, "10.0.0.1:80": false} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, got)
		}
	}
}
