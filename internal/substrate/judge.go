package substrate

// The optional model judge of tensions (issue 23; docs/tensions.md, "Model
// judge"). The deterministic rules stay the candidate generator: only the
// pairs they flag are put to the chat model, which says whether both claims
// can be true. It runs after the write has committed, so it never fails or
// rolls back a write and holds no transaction or lock while the model
// thinks; the call waits for it at most one timeout, the pairs being asked
// at once. A dismissed tension is deleted, a confirmed one gets the model's
// reason (Tension.Judge); a failure, timeout or malformed answer keeps the
// rules' verdict and is logged.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/tension"
)

// Judgment is the model judge's verdict on a tension it confirmed.
type Judgment struct {
	// Verdict is JudgeConflict: the model said both claims cannot be true
	// (a tension it dismisses is not kept).
	Verdict string `json:"verdict"`
	// Type is the kind of tension the model named, when it named one of
	// the tension types; the tension's own type stays the rules'.
	Type string `json:"type,omitempty"`
	// Reason is the model's one-sentence explanation.
	Reason string `json:"reason"`
	// Model names the provider and model that judged ("openai gpt-4o-mini").
	Model string `json:"model"`
}

// JudgeConflict is the verdict of a confirmed tension.
const JudgeConflict = "conflict"

// JudgeOptions bound the model judge.
type JudgeOptions struct {
	// Timeout bounds the model's answer about one pair (default 10 s).
	Timeout time.Duration
	// MaxPairs is how many tensions of one write are judged at most
	// (default 5); the others keep the rules' verdict.
	MaxPairs int
}

// modelJudge is the configured model judge of a Server.
type modelJudge struct {
	model    llm.Provider
	timeout  time.Duration
	maxPairs int
	// stop is cancelled by Server.Close: it ends the model calls in flight.
	stop   context.Context
	cancel context.CancelFunc
}

// UseJudge makes the server ask model about each tension the rules flag on
// belief_create and belief_supersede (not on batches or imports, nor inside
// a caller's transaction: see docs/tensions.md). Call it before serving;
// [Server.Close] ends the calls in flight.
func (s *Server) UseJudge(model llm.Provider, opts JudgeOptions) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MaxPairs <= 0 {
		opts.MaxPairs = 5
	}
	stop, cancel := context.WithCancel(context.Background())
	s.judge = &modelJudge{model: model, timeout: opts.Timeout, maxPairs: opts.MaxPairs, stop: stop, cancel: cancel}
}

// judgeSystem is the judge's fixed prompt.
const judgeSystem = `You check a knowledge base for contradictions. You are given two statements, A and B.
Decide whether both can be true at the same time (for the same subject, scope and time).
Answer with one JSON object and nothing else:
{"conflict": true or false, "type": "contradiction" | "temporal_conflict" | "scope_conflict" | "partial_overlap" | null, "reason": "one short sentence"}
conflict is true only when A and B cannot both be true.`

// maxJudgeReason bounds the stored reason, in bytes.
const maxJudgeReason = 500

// verdict is the judge's answer about one pair.
type verdict struct {
	conflict bool
	judgment Judgment
	err      error
}

// judgeTensions asks the model about the first maxPairs of ts (stored
// tensions of workspace in status detected), deletes those it dismisses and
// records the reason on those it confirms, and returns ts without the
// dismissed ones. Without a judge it returns ts. It never fails: a model or
// store failure keeps the rules' verdict and is logged.
func (s *Server) judgeTensions(ctx context.Context, workspace string, ts []Tension) []Tension {
	j := s.judge
	if j == nil || len(ts) == 0 {
		return ts
	}
	asked := ts[:min(len(ts), j.maxPairs)]
	for _, t := range ts[len(asked):] {
		s.log.DebugContext(ctx, "tension not judged: over the judge's pairs per write, the rules' verdict stays",
			"tension", t.ID, "max_pairs", j.maxPairs)
	}
	contents, err := s.beliefContents(ctx, workspace, asked)
	if err != nil {
		s.log.WarnContext(ctx, "tension judge: the rules' verdict stays", "err", err)
		return ts
	}
	verdicts := make([]verdict, len(asked))
	var wg sync.WaitGroup
	for i, t := range asked {
		wg.Go(func() {
			verdicts[i] = j.ask(ctx, contents[t.BeliefAID], contents[t.BeliefBID])
		})
	}
	wg.Wait()

	var dismissed []string
	confirmed := map[string]*Judgment{}
	for i, t := range asked {
		v := verdicts[i]
		switch {
		case v.err != nil:
			s.log.WarnContext(ctx, "tension judge failed: the rules' verdict stays", "tension", t.ID,
				"belief_a", t.BeliefAID, "belief_b", t.BeliefBID, "model", j.model.Name(), "err", v.err)
		case v.conflict:
			confirmed[t.ID] = &v.judgment
		default:
			s.log.DebugContext(ctx, "tension judge dismissed a tension", "tension", t.ID, "belief_a", t.BeliefAID,
				"belief_b", t.BeliefBID, "rules", t.Description, "model", j.model.Name(), "reason", v.judgment.Reason)
			dismissed = append(dismissed, t.ID)
		}
	}
	if len(dismissed) == 0 && len(confirmed) == 0 {
		return ts
	}
	if err := s.storeVerdicts(ctx, dismissed, confirmed); err != nil {
		s.log.WarnContext(ctx, "tension judge: store the verdicts: the rules' verdict stays", "err", err)
		return ts
	}
	out := make([]Tension, 0, len(ts))
	for _, t := range ts {
		if jd := confirmed[t.ID]; jd != nil {
			t.Judge = jd
		} else if slices.Contains(dismissed, t.ID) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// beliefContents returns the content of both beliefs of each tension, by id.
func (s *Server) beliefContents(ctx context.Context, workspace string, ts []Tension) (map[string]string, error) {
	var args []any
	seen := map[string]bool{}
	for _, t := range ts {
		for _, id := range []string{t.BeliefAID, t.BeliefBID} {
			if !seen[id] {
				seen[id] = true
				args = append(args, id)
			}
		}
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, content FROM beliefs WHERE id IN (`+placeholders(len(args))+`) AND workspace = ?`),
		append(args, workspace)...)
	if err != nil {
		return nil, fmt.Errorf("load the beliefs to judge: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, content string
		if err := rows.Scan(&id, &content); err != nil {
			return nil, fmt.Errorf("load the beliefs to judge: %w", err)
		}
		out[id] = content
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load the beliefs to judge: %w", err)
	}
	if len(out) != len(args) {
		return nil, errors.New("load the beliefs to judge: a belief is missing")
	}
	return out, nil
}

// storeVerdicts deletes the dismissed tensions (still detected) and records
// the confirmed ones' judgments, in one transaction.
func (s *Server) storeVerdicts(ctx context.Context, dismissed []string, confirmed map[string]*Judgment) error {
	return s.st.Tx(ctx, func(tx *sql.Tx) error {
		for _, id := range dismissed {
			if _, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM tensions WHERE id = ? AND status = ?`), id, TensionDetected); err != nil {
				return fmt.Errorf("delete dismissed tension: %w", err)
			}
		}
		for id, jd := range confirmed {
			b, err := json.Marshal(jd)
			if err != nil {
				return fmt.Errorf("encode judgment: %w", err)
			}
			if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE tensions SET judge = ? WHERE id = ?`), string(b), id); err != nil {
				return fmt.Errorf("record judgment: %w", err)
			}
		}
		return nil
	})
}

// ask puts the pair to the model within the judge's timeout.
func (j *modelJudge) ask(ctx context.Context, a, b string) verdict {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	stop := context.AfterFunc(j.stop, cancel)
	defer stop()
	var text strings.Builder
	err := j.model.Stream(ctx, llm.Request{
		System:    judgeSystem,
		Messages:  []llm.Message{{Role: llm.User, Content: "A: " + a + "\nB: " + b}},
		MaxTokens: 200,
	}, func(e llm.Event) error {
		text.WriteString(e.Text)
		if text.Len() > 8<<10 {
			return errors.New("the answer is too long")
		}
		return nil
	})
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return verdict{err: fmt.Errorf("no answer within %s: %w", j.timeout, err)}
		case j.stop.Err() != nil:
			return verdict{err: fmt.Errorf("the server is stopping: %w", err)}
		}
		return verdict{err: err}
	}
	v, err := parseVerdict(text.String())
	if err != nil {
		return verdict{err: err}
	}
	v.judgment.Model = j.model.Name()
	return v
}

// parseVerdict reads the model's answer: one JSON object
// {"conflict": bool, "type": ..., "reason": "..."}, alone or in a ```json
// fence.
func parseVerdict(text string) (verdict, error) {
	s := strings.TrimSpace(text)
	if body, ok := strings.CutPrefix(s, "```"); ok {
		body = strings.TrimPrefix(body, "json")
		if body, ok = strings.CutSuffix(strings.TrimSpace(body), "```"); ok {
			s = strings.TrimSpace(body)
		}
	}
	var ans struct {
		Conflict *bool   `json:"conflict"`
		Type     *string `json:"type"`
		Reason   string  `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&ans); err != nil {
		return verdict{}, fmt.Errorf("malformed answer %q: %w", clipBytes(text, 200), err)
	}
	if dec.More() || dec.InputOffset() != int64(len(s)) {
		return verdict{}, fmt.Errorf("malformed answer %q: more than one JSON object", clipBytes(text, 200))
	}
	if ans.Conflict == nil {
		return verdict{}, fmt.Errorf("malformed answer %q: no conflict field", clipBytes(text, 200))
	}
	v := verdict{conflict: *ans.Conflict, judgment: Judgment{Reason: clipBytes(strings.TrimSpace(ans.Reason), maxJudgeReason)}}
	if v.conflict {
		v.judgment.Verdict = JudgeConflict
	}
	if ans.Type != nil {
		switch *ans.Type {
		case tension.TypeContradiction, tension.TypeTemporalConflict, tension.TypeScopeConflict, tension.TypePartialOverlap:
			v.judgment.Type = *ans.Type
		}
	}
	return v, nil
}

// clip returns s cut to at most n bytes, on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// close ends the judge's model calls in flight.
func (j *modelJudge) close() {
	if j != nil {
		j.cancel()
	}
}
