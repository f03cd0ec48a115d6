// Package demo holds Nexus's own demo knowledge base, loaded into a new
// database so that a first run has something to query.
package demo

import (
	"context"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/substrate"
)

type ent = substrate.EntityInput

// Beliefs are the demo beliefs: facts about Nexus itself.
var Beliefs = []substrate.CreateInput{
	{Content: "Nexus serves tools to AI assistants over the Model Context Protocol from a single Go binary.",
		DomainPath: []string{"nexus", "architecture"}, SourceType: "document", SourceRef: "SPEC.md", SourceTitle: "Nexus product specification",
		Entities: []ent{{Name: "Nexus", Type: "project", Role: "subject", Aliases: []string{"Nexus hub"}}, {Name: "Model Context Protocol", Type: "concept", Role: "object", Aliases: []string{"MCP"}}}},
	{Content: "Nexus stores its data in embedded SQLite by default and in PostgreSQL when given a postgres URL.",
		DomainPath: []string{"nexus", "storage"}, SourceType: "document", SourceRef: "SPEC.md",
		Entities: []ent{{Name: "Nexus", Type: "project", Role: "subject"}, {Name: "SQLite", Type: "tool", Role: "object"}, {Name: "PostgreSQL", Type: "tool", Role: "object", Aliases: []string{"Postgres"}}}},
	{Content: "Every tool call in Nexus goes through one pipeline: validate, resolve context, execute, trace.",
		DomainPath: []string{"nexus", "architecture"}, SourceType: "document", SourceRef: "SPEC.md",
		Entities: []ent{{Name: "Nexus", Type: "project", Role: "subject"}}},
	{Content: "The substrate detects tensions between beliefs deterministically when a belief is created.",
		DomainPath: []string{"nexus", "substrate"}, SourceType: "document", SourceRef: "docs/substrate.md",
		Entities: []ent{{Name: "Nexus", Type: "project", Role: "subject"}}},
	{Content: "The default HTTP address of nexus serve is 127.0.0.1:7777.",
		DomainPath: []string{"nexus", "operations"}, SourceType: "document", SourceRef: "README.md",
		Confidence: conf(0.95),
		Entities:   []ent{{Name: "Nexus", Type: "project", Role: "subject"}}},
	{Content: "The default HTTP address of nexus serve is 127.0.0.1:8080.",
		DomainPath: []string{"nexus", "operations"}, SourceType: "inference", SourceRef: "an outdated blog post",
		Confidence: conf(0.3),
		Entities:   []ent{{Name: "Nexus", Type: "project", Role: "subject"}}},
}

func conf(overall float64) *substrate.ConfidenceInput {
	return &substrate.ConfidenceInput{Overall: &overall}
}

// Load creates the demo beliefs in workspace.
func Load(ctx context.Context, sub *substrate.Server, workspace string) error {
	for i, b := range Beliefs {
		if _, err := sub.Create(ctx, workspace, b); err != nil {
			return fmt.Errorf("demo belief %d: %w", i, err)
		}
	}
	return nil
}
