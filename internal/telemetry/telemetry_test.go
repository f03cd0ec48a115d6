package telemetry_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/nexus-mcp/nexus/internal/telemetry"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestOTLPExport sends a span with the real OTLP/HTTP exporter to a
// receiver that decodes the protobuf request as a collector would.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var names []string
	var service string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("unexpected export %s %s", r.URL.Path, r.Header.Get("Content-Type"))
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("decode export: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, "test", env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.Exporter != "otlp" {
		t.Fatalf("exporter %q", p.Exporter)
	}
	_, span := p.Tracer("t").Start(ctx, "tools/call belief_query")
	span.End()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(names) != 1 || names[0] != "tools/call belief_query" || service != "nexus" {
		t.Fatalf("received spans %v from service %q", names, service)
	}
}

func TestConsoleAndNone(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	p, err := telemetry.Setup(ctx, "test", env(map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "nexus-test"}), &out)
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.Tracer("t").Start(ctx, "tools/call x")
	span.End()
	p.Shutdown(ctx)
	if !strings.Contains(out.String(), `"Name":"tools/call x"`) || !strings.Contains(out.String(), "nexus-test") {
		t.Fatalf("console output: %s", out.String())
	}
	p, err = telemetry.Setup(ctx, "test", env(nil), io.Discard)
	if err != nil || p.Exporter != "none" {
		t.Fatalf("unconfigured: %v %v", p, err)
	}
	if _, span := p.Tracer("t").Start(ctx, "x"); span.IsRecording() {
		t.Fatal("an unconfigured tracer records")
	}
	if _, err := telemetry.Setup(ctx, "test", env(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}), io.Discard); err == nil || !strings.Contains(err.Error(), `"zipkin" is not one of otlp, console, none`) {
		t.Fatalf("unknown exporter: %v", err)
	}
}
