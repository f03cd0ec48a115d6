package pipeline

import (
	"encoding/json"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Body renders the outcome in the convention of the tool's family (SPEC
// section 5) and reports whether it is an error. It is the only place that
// decides what an error looks like on the wire.
//
//   - valence (substrate, vkb): {"success": false, "error_code", "error_message"}
//   - tutor: ADR-012 ErrorResponse {"code", "message", "details", "requestId"}
//     ([errs.Response], the body REST sends under "error")
//   - vault (the original Nexus's agents): {"success": false, "error", "code"},
//     the original's shape, with the code beside its message
//   - workbench meta-tools and unknown tools: the message as plain text
func (o *Outcome) Body() (body []byte, isError bool) {
	if o.Err == nil {
		return o.Result, o.MCP != nil && o.MCP.IsError
	}
	family := registry.Family("")
	if t := o.renderer(); t != nil {
		family = t.Family
	}
	var v any
	switch family {
	case registry.Valence:
		v = valenceError{Success: false, Code: o.Err.Code, Message: o.Err.Message}
	case registry.Tutor:
		v = o.Err.Response(o.RequestID) // no field: not part of the tutor shape
	case registry.Vault:
		v = vaultError{Success: false, Message: o.Err.Message, Code: o.Err.Code}
	default:
		return []byte(o.Err.Message), true
	}
	b, err := json.Marshal(v)
	if err != nil { // cannot happen: the types above always marshal
		return []byte(o.Err.Message), true
	}
	return b, true
}

// IsJSON reports whether [Outcome.Body] is a JSON document (as opposed to
// plain text), so a surface can also offer it as structured content.
func (o *Outcome) IsJSON() bool {
	if o.Err == nil {
		return true
	}
	t := o.renderer()
	return t != nil && (t.Family == registry.Valence || t.Family == registry.Tutor || t.Family == registry.Vault)
}

// renderer is the tool whose family renders the outcome.
func (o *Outcome) renderer() *registry.Tool {
	if o.Render != nil {
		return o.Render
	}
	return o.Tool
}

type valenceError struct {
	Success bool      `json:"success"`
	Code    errs.Code `json:"error_code"`
	Message string    `json:"error_message"`
}

// vaultError is the original Nexus's failure: {success: false, error}, and
// the code.
type vaultError struct {
	Success bool      `json:"success"`
	Message string    `json:"error"`
	Code    errs.Code `json:"code"`
}
