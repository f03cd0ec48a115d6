// Command revproxy is the bare HTTP hop of the cross-process proxy benchmark
// (cmd/nexus/proxy_bench_test.go): a standard library
// httputil.ReverseProxy in front of one upstream URL, with nothing else
// (no MCP decoding, no logging). It measures what any HTTP hop written in
// Go costs on the machine, to read the proxies' added latency against.
package main

import (
	"flag"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	to := flag.String("to", "", "upstream URL")
	flag.Parse()
	u, err := url.Parse(*to)
	if err != nil || u.Host == "" {
		slog.Error("revproxy: -to must be a URL", "to", *to)
		os.Exit(2)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// As Nexus's downstream client (config.DefaultMaxIdleConnections):
	// Go's default of 2 idle connections a host would make concurrent
	// calls open new TCP connections.
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 64, 64
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		Transport: tr,
	}
	if err := http.ListenAndServe(*addr, rp); err != nil {
		slog.Error("revproxy", "error", err)
		os.Exit(1)
	}
}
