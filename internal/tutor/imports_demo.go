package tutor

import (
	"context"
	"embed"
	"io/fs"
	"path"
)

// demoFiles are the tutor's demo data (internal/tutor/demo): a small
// catalogue and transfer set of the project's own, not taken from the
// shared real data, in the formats of the real files: 8 Langara courses
// (catalogue, attributes, five sections of Fall 2025), 6 SFU outlines, and
// 17 BC Transfer Guide rows from Langara to SFU and UBC Vancouver (single
// courses, "A & B = X" and "A & B = X & Y" sets, generic credit, a
// designation, an exemption, a no-credit row, and a rule superseded by a
// later one for the same course).
//
//go:embed demo/*.json
var demoFiles embed.FS

// DemoSource is the source of the records the demo data stores.
const DemoSource = "demo"

// DemoEvidence is the evidence source of the demo transfer rules: made up
// for trying the tools, not agreements of the BC Transfer Guide.
const DemoEvidence = "Nexus demo data (made up for trying the tools; not a BC Transfer Guide agreement)"

// LoadDemo imports the demo data through the importers (auto), its records
// marked with the source "demo". Like any import it is idempotent.
func (s *Server) LoadDemo(ctx context.Context) (Summary, error) {
	names, err := fs.Glob(demoFiles, "demo/*.json")
	if err != nil {
		return Summary{}, err
	}
	ins := make([]*input, 0, len(names))
	for _, n := range names {
		b, err := demoFiles.ReadFile(n)
		if err != nil {
			return Summary{}, err
		}
		ins = append(ins, &input{name: "demo/" + path.Base(n), data: b})
	}
	return s.importInputs(ctx, KindAuto, ins, nil, func(c *importConfig) { c.source = DemoSource })
}
