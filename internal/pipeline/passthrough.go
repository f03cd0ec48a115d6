package pipeline

import (
	"context"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// SurfaceProxy is the surface of the calls the per-server passthrough
// forwards (/mcp/servers/{toolbox}/{server}).
const SurfaceProxy = "proxy"

// Passthrough is a tools/call that the per-server passthrough forwarded to
// its downstream server as the client wrote it, without running it through
// the pipeline: the passthrough carries messages, not calls, so that its
// client sees the server as if connected to it directly. It is still
// recorded as every call is (SPEC section 5): [Pipeline.RecordPassthrough].
type Passthrough struct {
	// Surface is the surface that forwarded it: [SurfaceProxy] when empty.
	Surface string
	// Toolbox and Server name the downstream server; Tool is the name the
	// client called, as the server knows it (for a prompt or a resource a
	// surface forwarded: "prompt:NAME", "resource:URI").
	Toolbox, Server, Tool string
	// Start is when the call was received, Duration how long it took to
	// answer.
	Start    time.Time
	Duration time.Duration
	// ArgsBytes and ResultBytes are the sizes of the call's arguments and
	// of the answer (the result or error message).
	ArgsBytes, ResultBytes int
	// Err is why the call failed, as the pipeline names a downstream
	// failure (BAD_REQUEST for invalid parameters or an unknown tool,
	// SERVICE_UNAVAILABLE for a server that failed, timed out or could not
	// be reached); empty when the server answered with a result.
	Err errs.Code
	// IsError reports a result the server marked isError.
	IsError bool
}

// RecordPassthrough records c as the pipeline records the calls it runs:
// a trace (surface [SurfaceProxy], the caller from ctx, never the
// arguments) and the observer's metrics. The metrics name the tool by its
// flat name when the registry knows it or the server ran it (a result not
// marked isError), else as an unknown tool, so that names a caller makes up
// never become labels.
func (p *Pipeline) RecordPassthrough(ctx context.Context, c Passthrough) {
	id := registry.ID{Toolbox: c.Toolbox, Server: c.Server, Tool: c.Tool}
	surface := c.Surface
	if surface == "" {
		surface = SurfaceProxy
	}
	outcome := "ok"
	switch {
	case c.Err != "":
		outcome = string(c.Err)
	case c.IsError:
		outcome = "TOOL_ERROR"
	}
	if p.observer != nil {
		tool := ""
		if outcome == "ok" {
			tool = id.Name()
		} else if _, known := p.reg.LookupID(id); known {
			tool = id.Name()
		}
		p.observer.ObserveCall(tool, surface, outcome, c.Duration)
	}
	if p.traces == nil {
		return
	}
	rec := trace.Record{
		RequestID: ulid.Make().String(), Surface: surface, Toolbox: c.Toolbox, Server: c.Server, Tool: c.Tool,
		Source: string(registry.MCP), Workspace: DefaultWorkspace, UserID: p.principal(ctx).ID,
		StartedAt: c.Start, Duration: c.Duration, Outcome: trace.OK, ArgsBytes: c.ArgsBytes, ResultBytes: c.ResultBytes,
	}
	if outcome != "ok" {
		rec.Outcome, rec.ErrorCode = trace.Error, outcome
	}
	p.traces.Record(rec)
}
