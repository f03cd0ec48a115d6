// Package telemetry sets up OpenTelemetry tracing from the standard
// environment variables, so every tool call can be exported as a span (SPEC
// section 5, "Tracing"). Without configuration nothing is exported and the
// tracer costs nothing.
//
//	OTEL_TRACES_EXPORTER=otlp     export over OTLP/HTTP (the default when an
//	                              OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT is set)
//	OTEL_TRACES_EXPORTER=console  write spans as JSON to standard error
//	OTEL_TRACES_EXPORTER=none     export nothing
//
// The OTLP exporter reads the rest of its settings (endpoint, headers,
// timeout, TLS) from the usual OTEL_EXPORTER_OTLP_* variables, and the
// resource from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Provider is a tracer provider and the function that flushes and stops it.
type Provider struct {
	trace.TracerProvider
	// Exporter names what is configured: "none", "otlp" or "console".
	Exporter string
	shutdown func(context.Context) error
}

// Shutdown flushes pending spans and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p.shutdown == nil {
		return nil
	}
	return p.shutdown(ctx)
}

// Setup returns the provider the environment asks for; getenv is
// os.Getenv in production. console output goes to stderr.
func Setup(ctx context.Context, version string, getenv func(string) string, stderr io.Writer) (*Provider, error) {
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	if exporter == "" && (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		exporter = "otlp"
	}
	var exp sdktrace.SpanExporter
	var err error
	switch exporter {
	case "", "none":
		return &Provider{TracerProvider: noop.NewTracerProvider(), Exporter: "none"}, nil
	case "otlp":
		var opts []otlptracehttp.Option
		if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(u))
		} else if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(u, "/")+"/v1/traces"))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(stderr))
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not one of otlp, console, none", exporter)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing exporter %s: %w", exporter, err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName(serviceName(getenv)), semconv.ServiceVersion(version)))
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{TracerProvider: tp, Exporter: exporter, shutdown: tp.Shutdown}, nil
}

func serviceName(getenv func(string) string) string {
	if n := getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return "nexus"
}
