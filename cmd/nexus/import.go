package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	// progressbar draws the import's progress on a terminal: a well-kept
	// library (maintained, tests, no cgo) that throttles its redraws and
	// handles terminal widths; it is only used when standard error is a
	// terminal (golang.org/x/term), so redirected output stays clean.
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/nexus-mcp/nexus/internal/access"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/tutor"
)

// importSynopsis is nexus import's usage line.
const importSynopsis = "nexus import KIND FILE... [--data-dir DIR] [--db URL] [--workspace WS]"

// importKinds says what each kind reads, for the usage text.
const importKinds = `Kinds:
  bctg-transfers      BC Transfer Guide rows (langara/transfers.json): transfer rules
  langara-catalogue   the Langara catalogue (catalogue.json): courses
  langara-attributes  Langara course attributes (attributes.json), merged into courses
  langara-sections    Langara term files (2023{10,20,30}.json): sections of the term
  sfu-outlines        SFU outlines (sfu/outlines.json): courses, offerings, instructors
  tutor-session       a tutoring session exported by tn_session_export (--workspace)
  tutor-materials     course materials (docs/tutor-data.md): past exams, notes, links
  tutor-grades        grade distributions (docs/tutor-data.md) by course, term, section
  auto                each file as the kind its content shows (tutor data)
  beliefs             JSON Lines: one belief_create_batch item per line (belief_create's
                      arguments and an optional external_id: a line whose external_id the
                      workspace holds is not imported again), into --workspace; tensions
                      are detected; exit status 1 when a line was not imported
`

// cmdImport imports data files into the database: nexus import KIND
// FILE.... Each file is one transaction; importing a file again changes
// nothing. It never loads the demo data.
func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", importSynopsis, stdout, stderr)
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(stdout, "\n"+importKinds) }
	var c common
	c.register(fs)
	workspace := fs.String("workspace", pipeline.DefaultWorkspace, "the workspace a tutor-session snapshot is restored into, or beliefs are imported into")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		fmt.Fprintf(stderr, "nexus import: give a kind and at least one file: %s\n\n%s", importSynopsis, importKinds)
		return exitError{2}
	}
	kind, files := pos[0], pos[1:]
	if !isKind(kind) {
		fmt.Fprintf(stderr, "nexus import: unknown kind %q\n\n%s", kind, importKinds)
		return exitError{2}
	}
	if err := access.CheckWorkspace(*workspace); err != nil {
		return err
	}
	if err := checkDB(c.db); err != nil {
		return err
	}
	c.noDemo = true // an import never loads the demo data
	c.config = ""   // nor connects downstream servers
	a, _, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()

	var bar *progressbar.ProgressBar
	progress := func(done, total int) {}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		progress = func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("importing rows"),
					progressbar.OptionShowCount(), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
			}
			bar.Set(done)
		}
	}
	start := time.Now()
	if kind == KindBeliefs {
		sum, err := importBeliefs(ctx, a, files, *workspace, progress)
		if bar != nil {
			bar.Finish()
		}
		if sum != nil {
			printBeliefSummary(stdout, sum, c.databaseLocation(), time.Since(start))
		}
		if err != nil {
			return err
		}
		if len(sum.problems) > 0 {
			return exitError{1}
		}
		return nil
	}
	sum, err := a.Tutor.Import(ctx, kind, files, progress, tutor.IntoWorkspace(*workspace))
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	printSummary(stdout, sum, c.databaseLocation(), time.Since(start))
	return nil
}

func isKind(k string) bool {
	if k == KindBeliefs {
		return true
	}
	for _, x := range tutor.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// printSummary writes what an import did: the files, the rows read, the
// records created, updated and unchanged, the share of transfer rows
// parsed, and the rows not parsed with the top reasons.
func printSummary(w io.Writer, s tutor.Summary, db string, took time.Duration) {
	n := func(v int) string { return thousands(v) }
	fmt.Fprintf(w, "imported %d file(s) as %s into %s in %.1fs: %s rows read\n", s.Files, s.Kind, db, took.Seconds(), n(s.RowsRead))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  file\tkind\trows\tcreated\tupdated\tunchanged\tnot parsed")
	for _, f := range s.PerFile {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.File, f.Kind, n(f.RowsRead), n(f.Created), n(f.Updated), n(f.Unchanged), n(f.NotParsed))
	}
	tw.Flush()
	fmt.Fprintf(w, "records: %s created, %s updated, %s unchanged", n(s.Created), n(s.Updated), n(s.Unchanged))
	if s.Duplicates > 0 {
		fmt.Fprintf(w, "; %s row(s) repeated in their file, stored once", n(s.Duplicates))
	}
	fmt.Fprintln(w)
	if s.DemoRemoved > 0 {
		fmt.Fprintf(w, "demo records removed: %s (the demo's made-up records of the institutions these files name; real data never sits beside them)\n", n(s.DemoRemoved))
	}
	stored, unparsed := 0, 0
	for _, f := range s.PerFile {
		if f.Kind == tutor.KindTransfers {
			stored += f.RowsRead - f.Duplicates
			unparsed += f.NotParsed
		}
	}
	if stored > 0 {
		fmt.Fprintf(w, "transfer rows parsed into structured rules: %s of %s (%.2f%%); the others are kept verbatim, flagged unparsed\n",
			n(stored-unparsed), n(stored), 100*float64(stored-unparsed)/float64(stored))
	}
	fmt.Fprintf(w, "rows not parsed: %s\n", n(s.NotParsed))
	if s.ProblemCount == 0 {
		return
	}
	fmt.Fprintf(w, "problems: %s, by reason:\n", n(s.ProblemCount))
	for i, r := range s.Reasons {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more reasons\n", len(s.Reasons)-i)
			break
		}
		fmt.Fprintf(w, "  %7s  %s\n", n(r.Count), r.Reason)
	}
	fmt.Fprintln(w, "first problems:")
	for i, p := range s.Problems {
		if i == 10 {
			break
		}
		where := p.File
		if p.Row > 0 {
			where += fmt.Sprintf(" row %d", p.Row)
		}
		if p.Key != "" {
			where += " (" + p.Key + ")"
		}
		line := where + ": " + p.Reason
		if p.Detail != "" {
			line += ": " + p.Detail
		}
		fmt.Fprintln(w, "  "+clipLine(line, 200))
	}
}

// thousands writes n with comma separators: 11,882.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func clipLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}
