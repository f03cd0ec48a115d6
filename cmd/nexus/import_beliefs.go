package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// KindBeliefs is the import kind of a JSON Lines file of beliefs: one
// belief_create_batch item (belief_create's arguments and an optional
// external_id) per line.
const KindBeliefs = "beliefs"

const (
	// beliefChunkBytes bounds the arguments of one belief_create_batch call
	// the import makes, below the pipeline's limit on a call's arguments.
	beliefChunkBytes = pipeline.DefaultMaxArgBytes - 16<<10
	// maxBeliefLine bounds one line of a beliefs file.
	maxBeliefLine = pipeline.DefaultMaxArgBytes
	// importWorkers is how many chunks are in flight: one judging its
	// candidates while another writes.
	importWorkers = 2
)

// beliefLine is one line of a beliefs file.
type beliefLine struct {
	file string
	line int
	raw  json.RawMessage
}

// beliefProblem is a line that was not imported, and why.
type beliefProblem struct {
	file   string
	line   int
	reason string
}

// beliefSummary is what nexus import beliefs did.
type beliefSummary struct {
	files, lines                int
	created, existing, tensions int
	problems                    []beliefProblem
}

// importBeliefs imports JSON Lines files of beliefs into workspace through
// belief_create_batch (the pipeline's one call path), up to
// substrate.MaxBatch lines a call; a line the tool refuses is reported with
// its file and line number and the others are imported.
func importBeliefs(ctx context.Context, a *app.App, files []string, workspace string, progress func(done, total int)) (*beliefSummary, error) {
	for _, name := range files {
		if _, err := os.Stat(name); err != nil {
			return nil, err
		}
	}
	sum := &beliefSummary{files: len(files)}
	var lines []beliefLine
	for _, name := range files {
		got, problems, err := readBeliefLines(name)
		if err != nil {
			return nil, err
		}
		lines = append(lines, got...)
		sum.problems = append(sum.problems, problems...)
		sum.lines += len(got) + len(problems)
	}
	var chunks [][]beliefLine
	for start := 0; start < len(lines); {
		end, size := start, 0
		for end < len(lines) && end-start < substrate.MaxBatch && (end == start || size+len(lines[end].raw)+1 <= beliefChunkBytes) {
			size += len(lines[end].raw) + 1
			end++
		}
		chunks = append(chunks, lines[start:end])
		start = end
	}
	var (
		mu    sync.Mutex
		done  int
		first error
		wg    sync.WaitGroup
		work  = make(chan []beliefLine)
	)
	progress(0, len(lines))
	for range importWorkers {
		wg.Go(func() {
			for chunk := range work {
				var part beliefSummary
				err := importChunk(ctx, a.Pipeline, workspace, chunk, &part)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				sum.created += part.created
				sum.existing += part.existing
				sum.tensions += part.tensions
				sum.problems = append(sum.problems, part.problems...)
				done += len(chunk)
				progress(done, len(lines))
				mu.Unlock()
			}
		})
	}
	for _, c := range chunks {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		work <- c
	}
	close(work)
	wg.Wait()
	if first != nil {
		return sum, first
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	return sum, nil
}

// readBeliefLines reads a beliefs file: each non-blank line must be a JSON
// object; a line that is not is a problem, reported with its number.
func readBeliefLines(name string) ([]beliefLine, []beliefProblem, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var out []beliefLine
	var problems []beliefProblem
	for n := 1; ; n++ {
		line, err := readLine(r, maxBeliefLine)
		if errors.Is(err, io.EOF) && line == nil {
			break
		}
		if errors.Is(err, errLongLine) {
			problems = append(problems, beliefProblem{name, n, fmt.Sprintf("longer than %d bytes", maxBeliefLine)})
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("read %s: %w", name, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if jerr := json.Unmarshal(line, &obj); jerr != nil || obj == nil {
			reason := "not a JSON object"
			if jerr != nil {
				reason += ": " + jerr.Error()
			}
			problems = append(problems, beliefProblem{name, n, reason})
			continue
		}
		out = append(out, beliefLine{file: name, line: n, raw: json.RawMessage(bytes.Clone(line))})
	}
	return out, problems, nil
}

var errLongLine = errors.New("line too long")

// readLine returns the next line of r without its newline; a line longer
// than max is skipped to its end and reported as errLongLine.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(buf)+len(part) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			return []byte{}, errLongLine
		}
		buf = append(buf, part...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(buf) == 0 {
				return nil, err
			}
			return buf, err
		}
		return bytes.TrimSuffix(buf, []byte{'\n'}), nil
	}
}

// itemPrefix is what belief_create_batch and the pipeline's schema check
// put before an item's error ("beliefs[3].", "invalid arguments for
// belief_create_batch: beliefs[]: "): a line's problem names the line
// instead.
var itemPrefix = regexp.MustCompile(`^(invalid arguments for belief_create_batch: )?beliefs\[\d*\](\.|: )?`)

// importChunk creates one chunk of lines with one belief_create_batch call.
// When the call is refused as a whole (an item against the schema), the
// chunk is split in halves until the refused lines are found alone.
func importChunk(ctx context.Context, p *pipeline.Pipeline, workspace string, chunk []beliefLine, sum *beliefSummary) error {
	var args bytes.Buffer
	args.WriteString(`{"beliefs":[`)
	for i, l := range chunk {
		if i > 0 {
			args.WriteByte(',')
		}
		args.Write(l.raw)
	}
	args.WriteString(`]}`)
	o := p.Call(ctx, pipeline.Request{Tool: "belief_create_batch", Args: args.Bytes(), Surface: "cli",
		Context: &pipeline.CallContext{WorkspaceID: workspace}})
	if o.Err != nil {
		if o.Err.Code != errs.BadRequest {
			return fmt.Errorf("%s line %d: %w", chunk[0].file, chunk[0].line, o.Err)
		}
		if len(chunk) == 1 {
			sum.problems = append(sum.problems, beliefProblem{chunk[0].file, chunk[0].line, itemPrefix.ReplaceAllString(o.Err.Message, "")})
			return nil
		}
		half := len(chunk) / 2
		if err := importChunk(ctx, p, workspace, chunk[:half], sum); err != nil {
			return err
		}
		return importChunk(ctx, p, workspace, chunk[half:], sum)
	}
	var res substrate.BatchResult
	if err := json.Unmarshal(o.Result, &res); err != nil {
		return fmt.Errorf("belief_create_batch result: %w", err)
	}
	sum.created += res.Created
	sum.existing += res.Existing
	sum.tensions += res.TensionsFound
	for _, item := range res.Results {
		if item.Error != nil && item.Index < len(chunk) {
			l := chunk[item.Index]
			sum.problems = append(sum.problems, beliefProblem{l.file, l.line, itemPrefix.ReplaceAllString(item.Error.Message, "")})
		}
	}
	return nil
}

// printBeliefSummary writes what nexus import beliefs did.
func printBeliefSummary(w io.Writer, s *beliefSummary, db string, took time.Duration) {
	n := thousands
	rate := 0.0
	if took > 0 {
		rate = float64(s.created+s.existing) / took.Seconds()
	}
	fmt.Fprintf(w, "imported %d file(s) of beliefs into %s in %.1fs: %s lines read (%s a second)\n",
		s.files, db, took.Seconds(), n(s.lines), n(int(rate)))
	fmt.Fprintf(w, "beliefs: %s created, %s already there (same external_id), %s not imported\n",
		n(s.created), n(s.existing), n(len(s.problems)))
	fmt.Fprintf(w, "tensions found: %s\n", n(s.tensions))
	if len(s.problems) == 0 {
		return
	}
	slices.SortFunc(s.problems, func(a, b beliefProblem) int {
		if a.file != b.file {
			return strings.Compare(a.file, b.file)
		}
		return a.line - b.line
	})
	fmt.Fprintln(w, "lines not imported:")
	for i, p := range s.problems {
		if i == 20 {
			fmt.Fprintf(w, "  ... and %s more\n", n(len(s.problems)-i))
			break
		}
		fmt.Fprintln(w, "  "+clipLine(p.file+" line "+strconv.Itoa(p.line)+": "+p.reason, 200))
	}
}
