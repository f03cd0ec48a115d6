package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestOwnResources: Nexus's own servers offer resource templates on /mcp,
// a course's outline (tn://courses/INSTITUTION/SUBJECT/NUMBER) and a
// belief (nexus://beliefs/ID), for session and sessionless clients; reading
// one calls its tool (traced like a call), and what does not exist is
// resource not found naming it.
func TestOwnResources(t *testing.T) {
	base := startServe(t)
	ctx := context.Background()
	for _, kind := range []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{{"session", testtools.WithSession()}, {"sessionless", testtools.Sessionless()}} {
		t.Run(kind.name, func(t *testing.T) {
			cs, _ := connectWith(t, base+"/mcp", kind.opts)
			if caps := cs.InitializeResult().Capabilities; caps.Resources == nil {
				t.Fatalf("capabilities %+v: want resources", caps)
			}
			templates := templateURIs(t, cs)
			for _, want := range []string{"tn://courses/{institution}/{subject}/{number}", "nexus://beliefs/{id}"} {
				if !slices.Contains(templates, want) {
					t.Errorf("templates %v: want %s", templates, want)
				}
			}

			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tn://courses/langara/CPSC/1050"})
			if err != nil {
				t.Fatal(err)
			}
			var outline struct{ Course, Title, Institution string }
			if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "application/json" || json.Unmarshal([]byte(rr.Contents[0].Text), &outline) != nil ||
				outline.Course != "langara:CPSC 1050" || outline.Institution != "langara" || outline.Title == "" {
				t.Errorf("the outline of langara:CPSC 1050: %+v (%+v)", rr.Contents, outline)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tn://courses/langara/CPSC/9999"}); err == nil ||
				!strings.Contains(err.Error(), "tn://courses/langara/CPSC/9999") {
				t.Errorf("an unknown course: %v, want resource not found naming it", err)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_create", Arguments: map[string]any{
				"content": "Langara's CPSC 1050 transfers to SFU as CMPT 120", "confidence": map[string]any{"overall": 0.8}, "domain_path": []any{"transfer"}}})
			if err != nil || res.IsError {
				t.Fatalf("belief_create: %v %s", err, text(res))
			}
			var created struct {
				Belief struct{ ID string }
			}
			if err := json.Unmarshal([]byte(text(res)), &created); err != nil || created.Belief.ID == "" {
				t.Fatalf("belief_create: %s", text(res))
			}
			rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nexus://beliefs/" + created.Belief.ID})
			if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "transfers to SFU as CMPT 120") {
				t.Errorf("the belief as a resource: %+v %v", rr, err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nexus://beliefs/nope"}); err == nil || !strings.Contains(err.Error(), "nexus://beliefs/nope") {
				t.Errorf("an unknown belief: %v", err)
			}
		})
	}
}
