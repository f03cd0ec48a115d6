package vault

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// batchContent (contract section 1): several content operations, all
// checked before any runs, then run in order; one that fails does not stop
// the others. The original checked required fields by truthiness, so an
// empty content was refused in a batch that the single mode accepts;
// Nexus checks presence, as the single modes do.

type batchIn struct {
	Vault      string    `json:"vault"`
	Operations []batchOp `json:"operations"`
}

type batchOp struct {
	Type   string          `json:"type"`
	Params json.RawMessage `json:"params"`
}

// batchRequired are each operation type's required parameters besides
// filePath.
var batchRequired = map[string][]string{
	"read": nil, "create": {"content"}, "append": {"content"}, "prepend": {"content"},
	"replace": {"oldContent", "newContent"}, "replaceByLine": {"startLine", "endLine", "newContent"},
	"delete": {"content"}, "findReplace": {"findText", "replaceText"},
}

type batchEntry struct {
	Success  bool   `json:"success"`
	Error    string `json:"error,omitempty"`
	Data     any    `json:"data,omitempty"`
	Type     string `json:"type"`
	FilePath string `json:"filePath"`
}

func (s *Server) batchContent(ctx context.Context, c *registry.Call, in batchIn) (result, error) {
	if len(in.Operations) == 0 {
		return result{}, errs.E(errs.BadRequest, "Operations array is empty or not provided")
	}
	params := make([]map[string]json.RawMessage, len(in.Operations))
	for i, op := range in.Operations {
		if err := json.Unmarshal(op.Params, &params[i]); err != nil || params[i] == nil {
			return result{}, errs.E(errs.BadRequest, "Missing 'filePath' property in operation at index %d. Each operation must include a 'filePath' parameter.", i)
		}
		if _, ok := params[i]["filePath"]; !ok {
			return result{}, errs.E(errs.BadRequest, "Missing 'filePath' property in operation at index %d. Each operation must include a 'filePath' parameter.", i)
		}
		req, known := batchRequired[op.Type]
		if !known {
			return result{}, errs.E(errs.BadRequest, "Unknown operation type: %s at index %d", op.Type, i)
		}
		for _, f := range req {
			if _, ok := params[i][f]; !ok {
				return result{}, errs.E(errs.BadRequest, "Missing '%s' property in %s operation at index %d", f, op.Type, i)
			}
		}
		if in.Vault != "" {
			if _, ok := params[i]["vault"]; !ok {
				params[i]["vault"], _ = json.Marshal(in.Vault)
			}
		}
	}
	entries := make([]batchEntry, len(in.Operations))
	reads, creates := 0, 0
	for i, op := range in.Operations {
		raw, _ := json.Marshal(params[i])
		var path struct {
			FilePath string `json:"filePath"`
		}
		json.Unmarshal(raw, &path)
		e := batchEntry{Type: op.Type, FilePath: path.FilePath}
		r, err := s.runOp(ctx, c, op.Type, raw)
		if err != nil {
			e.Error = errs.From(err).Message
		} else {
			e.Success, e.Data = true, r.Data
			if m, ok := e.Data.(map[string]any); ok && (op.Type == "append" || op.Type == "prepend") {
				delete(m, "filePath")
			}
		}
		switch op.Type {
		case "read":
			reads++
		case "create":
			creates++
		}
		entries[i] = e
	}
	var recs []recommendation
	if reads > 3 {
		recs = append(recs, recommendation{Type: "save", Message: fmt.Sprintf("You read %d notes: save what matters of them to memory (memoryManager createState).", reads)})
	}
	if creates > 2 {
		recs = append(recs, recommendation{Type: "agent_suggestion", Message: fmt.Sprintf("You created %d notes: link them to each other with [[wikilinks]] and give them #tags.", creates)})
	}
	return ok(map[string]any{"results": entries}, recs...), nil
}

// runOp runs one operation of a batch as its single mode would.
func (s *Server) runOp(ctx context.Context, c *registry.Call, typ string, raw json.RawMessage) (result, error) {
	run := func(fn func() (result, error), into any) (result, error) {
		if err := json.Unmarshal(raw, into); err != nil {
			return result{}, errs.E(errs.BadRequest, "invalid parameters: %v", err)
		}
		return fn()
	}
	switch typ {
	case "read":
		var in readIn
		return run(func() (result, error) { return s.readContent(ctx, c, in) }, &in)
	case "create":
		var in createIn
		return run(func() (result, error) { return s.createContent(ctx, c, in) }, &in)
	case "append":
		var in addIn
		return run(func() (result, error) { return s.appendContent(ctx, c, in) }, &in)
	case "prepend":
		var in addIn
		return run(func() (result, error) { return s.prependContent(ctx, c, in) }, &in)
	case "replace":
		var in replaceIn
		return run(func() (result, error) { return s.replaceContent(ctx, c, in) }, &in)
	case "replaceByLine":
		var in byLineIn
		return run(func() (result, error) { return s.replaceByLine(ctx, c, in) }, &in)
	case "delete":
		var in deleteIn
		return run(func() (result, error) { return s.deleteContent(ctx, c, in) }, &in)
	default: // findReplace: the types were checked
		var in findReplaceIn
		return run(func() (result, error) { return s.findReplaceContent(ctx, c, in) }, &in)
	}
}
