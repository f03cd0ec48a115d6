package tutor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// Attribution credits the BC Transfer Guide in every answer that shows its
// rules.
const Attribution = "Transfer agreements from the BC Transfer Guide (https://www.bctransferguide.ca/), as imported into this server."

// attribution credits the sources of the rules an answer shows: the BC
// Transfer Guide (Attribution) when they are all its own or there are none,
// and otherwise every source by name (the demo data says it is made up).
func attribution(evidence []transfer.Evidence) string {
	var others []string
	bctg := false
	for _, e := range evidence {
		switch {
		case e.Source == transfer.EvidenceSource:
			bctg = true
		case e.Source != "" && !slices.Contains(others, e.Source):
			others = append(others, e.Source)
		}
	}
	if len(others) == 0 {
		return Attribution
	}
	out := "Transfer agreements from: " + strings.Join(others, "; ")
	if bctg {
		out += "; and the BC Transfer Guide (https://www.bctransferguide.ca/)"
	}
	return out + "."
}

// rulesRecheck is how often the transfer rule index checks the store for
// rules changed by another replica (an import on this one refreshes it at
// once, see rulesChanged).
const rulesRecheck = time.Second

func (s *Server) transferTools() []registry.Def {
	d := func(name, desc string, h registry.Typed) registry.Def {
		return registry.Def{Name: name, Description: desc, ReadOnly: true, Family: registry.Tutor, Schema: schema(name), Handler: h}
	}
	return []registry.Def{
		d("tn_transfer_resolve", "Resolve a set of source courses (order does not matter) to transfer credit at a target institution, with the rules in force at asOfDate (default today): exactMatches are agreements the courses satisfy; partialMatches are agreements that need more courses (missing names them, progress counts or/n-of groups); a course that earns no credit says so; unmatched lists courses no agreement names. Each match has source and target credits, the effective range, evidence (BC Transfer Guide) and confidence. award (awards, one per destination, without targetInstitution) adds up what the courses are worth: the best set of rules, each course used once, with totalCredits, why each rule was chosen, the courses left and why, and what more courses would earn; summary says it in words. Add up the award, never exactMatches (it lists alternatives of the same courses).", registry.Handle(s.transferResolve)),
		d("tn_transfer_search", "Search transfer agreements (BC Transfer Guide) by institution pair, course (on either side), subject and date, paginated (limit, cursor).", registry.Handle(s.transferSearch)),
		d("tn_transfer_details", "Get one transfer agreement in full by ruleId (from tn_transfer_search or tn_transfer_resolve): its structured source groups and targets, the credit text, conditions, effective range, evidence, confidence, and the other versions of the same agreement over time.", registry.Handle(s.transferDetails)),
	}
}

// ruleSet is the in-memory index of the stored transfer rules.
type ruleSet struct {
	version string
	checked time.Time
	ix      *transfer.Index
	ids     map[string]string // ruleKey -> stored id
}

// ruleKey identifies a stored rule by what the index keeps of it.
func ruleKey(r *transfer.Rule) string {
	return r.Course.String() + "\x00" + r.Destination + "\x00" + r.EffectiveStart.Format(time.DateOnly) + "\x00" + r.Raw
}

// rulesChanged drops the rule index, and the course search index, which
// holds each course's equivalents' titles; the importer calls it after a
// commit.
func (s *Server) rulesChanged() {
	s.mu.Lock()
	s.rules = nil
	s.courses = nil
	s.mu.Unlock()
}

// rulesVersion identifies the stored rules' state.
func (s *Server) rulesVersion(ctx context.Context) (string, error) {
	var n, last int64
	if err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(updated_at), 0) FROM tn_transfer_rules`).Scan(&n, &last); err != nil {
		return "", fmt.Errorf("read transfer rules version: %w", err)
	}
	return fmt.Sprintf("%d/%d", n, last), nil
}

// ruleIndex returns the index of the stored rules, rebuilt when they
// changed (checked at most every rulesRecheck).
func (s *Server) ruleIndex(ctx context.Context) (*ruleSet, error) {
	s.mu.Lock()
	rs := s.rules
	s.mu.Unlock()
	now := time.Now()
	if rs != nil && now.Sub(rs.checked) < rulesRecheck {
		return rs, nil
	}
	v, err := s.rulesVersion(ctx)
	if err != nil {
		return nil, err
	}
	if rs != nil && rs.version == v {
		s.mu.Lock()
		rs.checked = now
		s.mu.Unlock()
		return rs, nil
	}
	rows, err := s.st.DB().QueryContext(ctx, `SELECT id, rule FROM tn_transfer_rules`)
	if err != nil {
		return nil, fmt.Errorf("read transfer rules: %w", err)
	}
	defer rows.Close()
	var rules []transfer.Rule
	ids := map[string]string{}
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("read transfer rules: %w", err)
		}
		var r transfer.Rule
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			// One unreadable rule must not stop every resolution: it is
			// left out, and said so.
			s.log.Error("transfer rule left out of resolution: its stored form does not decode", "rule", id, "err", err)
			continue
		}
		s.followable(&r)
		rules = append(rules, r)
		ids[ruleKey(&r)] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read transfer rules: %w", err)
	}
	rs = &ruleSet{version: v, checked: now, ix: transfer.NewIndex(rules), ids: ids}
	s.mu.Lock()
	s.rules = rs
	s.mu.Unlock()
	return rs, nil
}

// institution resolves an institution argument (key, code or name) named
// field; empty stays empty.
func (s *Server) institutionArg(field, v string) (catalog.Institution, error) {
	if strings.TrimSpace(v) == "" {
		return catalog.Institution{}, nil
	}
	in, ok := s.dir.Lookup(v)
	if !ok {
		return catalog.Institution{}, errs.Invalid(field, "unknown institution %q: give its key (sfu), BC Transfer Guide code (SFU) or name (Simon Fraser University); tn_course_institutions lists them", v)
	}
	return in, nil
}

// asOf reads an asOfDate argument: an RFC 3339 date ("2024-09-01") or date
// and time; empty is today.
func (s *Server) asOf(v string) (time.Time, error) {
	if v == "" {
		return s.now(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, errs.Invalid("asOfDate", "%q is not an RFC 3339 date (2024-09-01) or date-time (2024-09-01T00:00:00Z)", v)
	}
	return t.UTC(), nil
}

// courseRef reads a course named by field: "institution:CODE", or a bare
// "SUBJECT NUMBER" at the default institution def (when there is one).
func (s *Server) refArg(field, v string, def catalog.Institution) (catalog.Ref, error) {
	if !strings.Contains(v, ":") && def.Key != "" {
		subject, number, err := catalog.SplitCode(v)
		if err != nil {
			return catalog.Ref{}, errs.Invalid(field, "%v; write SUBJECT NUMBER (CPSC 1150) or institution:SUBJECT NUMBER (langara:CPSC 1150)", err)
		}
		return catalog.Ref{Institution: def.Key, Subject: subject, Number: number}, nil
	}
	r, err := s.dir.ParseRef(v)
	if err != nil {
		return catalog.Ref{}, errs.Invalid(field, "%v", err)
	}
	return r, nil
}

// MatchView is one match of tn_transfer_resolve.
type MatchView struct {
	RuleID         string                   `json:"ruleId"`
	Course         string                   `json:"course"`
	Destination    string                   `json:"destination"`
	Outcome        string                   `json:"outcome"`
	Credit         string                   `json:"credit"`
	Used           []string                 `json:"used"`
	Targets        []transfer.TargetSet     `json:"targets,omitempty"`
	SourceCredits  *float64                 `json:"sourceCredits,omitempty"`
	TargetCredits  []float64                `json:"targetCredits,omitempty"`
	Missing        []string                 `json:"missing,omitempty"`
	Progress       []transfer.GroupProgress `json:"progress,omitempty"`
	Conditions     []string                 `json:"conditions,omitempty"`
	Designations   []string                 `json:"designations,omitempty"`
	Waives         []transfer.Target        `json:"waives,omitempty"`
	EffectiveStart string                   `json:"effectiveStart,omitempty"`
	EffectiveEnd   string                   `json:"effectiveEnd,omitempty"`
	Evidence       transfer.Evidence        `json:"evidence"`
	Confidence     float64                  `json:"confidence"`
	// SourceCreditsFrom says where SourceCredits come from: "credit text"
	// (BCTG's text states them) or "catalogue" (the source institution's
	// imported catalogue, when the text does not).
	SourceCreditsFrom string `json:"sourceCreditsFrom,omitempty"`
	// Notes and Doubts are the rule's structured conditions and the
	// parser's doubts about it.
	Notes  []transfer.Note `json:"notes,omitempty"`
	Doubts []string        `json:"doubts,omitempty"`
	// Award is what became of an exact match in the award at its
	// destination: awarded, alternative (worth as much as the awarded
	// rules in AlternativeTo, which the award preferred for AwardReason),
	// replaced (ReplacedBy give more), conditional (its credit needs a
	// condition course codes cannot confirm) or doubtful (its confidence
	// is below transfer.AwardMinConfidence: shown, not counted). Empty on
	// other matches.
	Award         string   `json:"award,omitempty"`
	AlternativeTo []string `json:"alternativeTo,omitempty"`
	ReplacedBy    []string `json:"replacedBy,omitempty"`
	AwardReason   string   `json:"awardReason,omitempty"`
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

func refs(rs []catalog.Ref) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

func (rs *ruleSet) view(m transfer.Match, cc *catalogueCredits) MatchView {
	r := m.Rule
	v := MatchView{RuleID: rs.ids[ruleKey(r)], Course: r.Course.String(), Destination: r.Destination, Outcome: string(m.Outcome),
		Credit: r.Raw, Used: refs(m.Used), Targets: r.Targets, TargetCredits: m.TargetCredits,
		Progress: m.Progress, Conditions: r.Conditions, Designations: r.Designations, Waives: r.Waives,
		EffectiveStart: date(m.EffectiveStart), EffectiveEnd: date(m.EffectiveEnd), Evidence: m.Evidence, Confidence: m.Confidence,
		Notes: r.Notes, Doubts: r.Doubts}
	v.SourceCredits, v.SourceCreditsFrom = cc.sourceCredits(m.SourceCredits, m.Used)
	for _, p := range m.Progress {
		if !p.Satisfied {
			v.Missing = append(v.Missing, refs(p.Missing)...)
		}
	}
	return v
}

type resolveIn struct {
	SourceInstitution string   `json:"sourceInstitution,omitempty"`
	TargetInstitution string   `json:"targetInstitution,omitempty"`
	SourceCourses     []string `json:"sourceCourses"`
	AsOfDate          string   `json:"asOfDate,omitempty"`
}

type resolveOut struct {
	SourceInstitution string   `json:"sourceInstitution,omitempty"`
	TargetInstitution string   `json:"targetInstitution,omitempty"`
	AsOfDate          string   `json:"asOfDate"`
	SourceCourses     []string `json:"sourceCourses"`
	// Summary says the award in words: the total, what each course earns
	// (with rule ids) and what is not counted and why.
	Summary string `json:"summary"`
	// Award is the award at targetInstitution (given); Awards one per
	// destination of the matches, best total first (targetInstitution
	// omitted). See transfer.AwardFor.
	Award  *AwardView  `json:"award,omitempty"`
	Awards []AwardView `json:"awards,omitempty"`
	// ExactMatches are the satisfied rules that grant credit or an
	// exemption; no-credit and individual-assessment outcomes are in
	// NoCreditMatches and AssessmentMatches.
	ExactMatches      []MatchView `json:"exactMatches"`
	PartialMatches    []MatchView `json:"partialMatches"`
	NoCreditMatches   []MatchView `json:"noCreditMatches"`
	AssessmentMatches []MatchView `json:"assessmentMatches"`
	NoCredit          []string    `json:"noCredit"`
	Unmatched         []string    `json:"unmatched"`
	// UnmatchedReasons say, for each course of Unmatched, why.
	UnmatchedReasons []UnmatchedView `json:"unmatchedReasons"`
	Attribution      string          `json:"attribution"`
}

func (s *Server) transferResolve(ctx context.Context, _ *registry.Call, in resolveIn) (resolveOut, error) {
	src, err := s.institutionArg("sourceInstitution", in.SourceInstitution)
	if err != nil {
		return resolveOut{}, err
	}
	dst, err := s.institutionArg("targetInstitution", in.TargetInstitution)
	if err != nil {
		return resolveOut{}, err
	}
	at, err := s.asOf(in.AsOfDate)
	if err != nil {
		return resolveOut{}, err
	}
	have := make([]catalog.Ref, 0, len(in.SourceCourses))
	for i, c := range in.SourceCourses {
		r, err := s.refArg(fmt.Sprintf("sourceCourses[%d]", i), c, src)
		if err != nil {
			return resolveOut{}, err
		}
		if src.Key != "" && r.Institution != src.Key {
			return resolveOut{}, errs.Invalid(fmt.Sprintf("sourceCourses[%d]", i), "%s is not a course of the source institution %s", r, src.Key)
		}
		if !slices.Contains(have, r) {
			have = append(have, r)
		}
	}
	rs, err := s.ruleIndex(ctx)
	if err != nil {
		return resolveOut{}, err
	}
	res := rs.ix.ResolveTo(dst.Key, have, at)
	cc, err := s.catalogueFor(ctx, have)
	if err != nil {
		return resolveOut{}, err
	}
	out := resolveOut{SourceInstitution: src.Key, TargetInstitution: dst.Key, AsOfDate: date(at), SourceCourses: refs(have),
		ExactMatches: []MatchView{}, PartialMatches: []MatchView{}, NoCreditMatches: []MatchView{}, AssessmentMatches: []MatchView{},
		NoCredit: []string{}, Unmatched: refs(res.Unmatched), UnmatchedReasons: []UnmatchedView{}}
	var shown []transfer.Evidence
	for _, m := range append(slices.Clone(res.ExactMatches), res.PartialMatches...) {
		shown = append(shown, m.Evidence)
	}
	out.Attribution = attribution(shown)

	// Why each unmatched course is unmatched (to the destination asked).
	why := func(dest string, c catalog.Ref) UnmatchedView {
		return s.unmatchedView(rs, cc, dest, c, rs.ix.WhyUnmatched(dest, c, at))
	}
	unmatched := map[string]UnmatchedView{}
	for _, c := range res.Unmatched {
		u := why(dst.Key, c)
		unmatched[c.String()] = u
		out.UnmatchedReasons = append(out.UnmatchedReasons, u)
	}

	// The award (one per destination without targetInstitution), and the
	// status of each exact match in it.
	var awards []transfer.Award
	if dst.Key != "" {
		awards = []transfer.Award{transfer.AwardFor(res, dst.Key, have)}
	} else {
		awards = transfer.Awards(res, have)
	}
	status := make([]transfer.MatchAward, len(res.ExactMatches))
	for i := range awards {
		for mi, st := range awards[i].Statuses {
			if st.Status != "" {
				status[mi] = st
			}
		}
		v := s.awardView(rs, cc, &res, &awards[i], have, unmatched, why)
		if dst.Key != "" {
			out.Award = &v
		} else {
			out.Awards = append(out.Awards, v)
		}
	}
	out.Summary = resolveSummary(s, out)

	noCredit := map[string]bool{}
	for mi, m := range res.ExactMatches {
		v := rs.view(m, cc)
		switch m.Outcome {
		case transfer.OutcomeNoCredit:
			out.NoCreditMatches = append(out.NoCreditMatches, v)
			for _, u := range m.Used {
				if !noCredit[u.String()] {
					noCredit[u.String()] = true
					out.NoCredit = append(out.NoCredit, u.String())
				}
			}
			continue
		case transfer.OutcomeAssessment:
			out.AssessmentMatches = append(out.AssessmentMatches, v)
			continue
		}
		st := status[mi]
		v.Award, v.AwardReason = string(st.Status), st.Reason
		var against []string
		for _, a := range st.Against {
			against = append(against, rs.ids[ruleKey(res.ExactMatches[a].Rule)])
		}
		switch st.Status {
		case transfer.StatusAlternative:
			v.AlternativeTo = against
		case transfer.StatusReplaced:
			v.ReplacedBy = against
		}
		out.ExactMatches = append(out.ExactMatches, v)
	}
	for _, m := range res.PartialMatches {
		out.PartialMatches = append(out.PartialMatches, rs.view(m, cc))
	}
	return out, nil
}

// resolveSummary says tn_transfer_resolve's answer in words: the award at
// the destination asked, or each destination's total.
func resolveSummary(s *Server, out resolveOut) string {
	if out.Award != nil {
		sum := awardSummary(*out.Award, s.instCode(out.Award.Destination))
		for _, u := range out.UnmatchedReasons {
			if !strings.Contains(sum, shortCode(u.Course)+" (") {
				sum += fmt.Sprintf(" %s: %s.", shortCode(u.Course), u.Detail)
			}
		}
		return sum
	}
	if len(out.Awards) == 0 {
		msg := "No agreement in force names these courses."
		for _, u := range out.UnmatchedReasons {
			msg += fmt.Sprintf(" %s: %s.", shortCode(u.Course), u.Detail)
		}
		return msg
	}
	var parts []string
	for _, a := range out.Awards {
		parts = append(parts, fmt.Sprintf("%s %s credits (%d of %d courses used)", s.instCode(a.Destination), strconv.FormatFloat(a.TotalCredits, 'f', -1, 64), len(a.CoursesUsed), len(out.SourceCourses)))
	}
	return "Award by destination, each course counted once per destination (awards has each in full; ask with targetInstitution for one): " + strings.Join(parts, "; ") + "."
}

// RuleView is a stored transfer rule as the search and details tools show
// it.
type RuleView struct {
	RuleID            string        `json:"ruleId"`
	SourceInstitution string        `json:"sourceInstitution"`
	TargetInstitution string        `json:"targetInstitution"`
	Course            string        `json:"course"`
	Outcome           string        `json:"outcome"`
	Credit            string        `json:"credit"`
	Parsed            bool          `json:"parsed"`
	EffectiveStart    string        `json:"effectiveStart,omitempty"`
	EffectiveEnd      string        `json:"effectiveEnd,omitempty"`
	InForce           bool          `json:"inForce"`
	Rule              transfer.Rule `json:"rule"`
}

type searchIn struct {
	SourceInstitution string `json:"sourceInstitution,omitempty"`
	TargetInstitution string `json:"targetInstitution,omitempty"`
	Course            string `json:"course,omitempty"`
	Subject           string `json:"subject,omitempty"`
	AsOfDate          string `json:"asOfDate,omitempty"`
	IncludeExpired    bool   `json:"includeExpired,omitempty"`
	Limit             int    `json:"limit"`
	Cursor            string `json:"cursor,omitempty"`
}

type searchOut struct {
	Page[RuleView]
	Attribution string `json:"attribution"`
}

func (s *Server) transferSearch(ctx context.Context, _ *registry.Call, in searchIn) (searchOut, error) {
	src, err := s.institutionArg("sourceInstitution", in.SourceInstitution)
	if err != nil {
		return searchOut{}, err
	}
	dst, err := s.institutionArg("targetInstitution", in.TargetInstitution)
	if err != nil {
		return searchOut{}, err
	}
	at, err := s.asOf(in.AsOfDate)
	if err != nil {
		return searchOut{}, err
	}
	var course catalog.Ref
	if in.Course != "" {
		if course, err = s.refArg("course", in.Course, src); err != nil {
			return searchOut{}, err
		}
	}
	subject := strings.ToUpper(strings.TrimSpace(in.Subject))
	scope := []string{src.Key, dst.Key, course.String(), subject, date(at), fmt.Sprint(in.IncludeExpired)}
	offset, size, err := s.window("tn_transfer_search", in.Limit, in.Cursor, scope...)
	if err != nil {
		return searchOut{}, err
	}
	q := `SELECT r.id, r.rule FROM tn_transfer_rules r WHERE 1 = 1`
	var args []any
	if src.Key != "" {
		q += ` AND r.source_institution = ?`
		args = append(args, src.Key)
	}
	if dst.Key != "" {
		q += ` AND r.target_institution = ?`
		args = append(args, dst.Key)
	}
	if subject != "" {
		q += ` AND r.subject = ?`
		args = append(args, subject)
	}
	if in.Course != "" {
		q += ` AND r.id IN (SELECT rule_id FROM tn_transfer_rule_courses WHERE course = ?)`
		args = append(args, course.String())
	}
	if !in.IncludeExpired {
		d := date(at)
		q += ` AND r.effective_start <= ? AND (r.effective_end IS NULL OR r.effective_end = '' OR r.effective_end >= ?)`
		args = append(args, d, d)
	}
	views, err := s.ruleViews(ctx, q+` ORDER BY r.source_institution, r.subject, r.number, r.target_institution, r.effective_start, r.id`, at, args...)
	if err != nil {
		return searchOut{}, err
	}
	pg := page(s, views, offset, size, "tn_transfer_search", scope...)
	var shown []transfer.Evidence
	for _, v := range pg.Items {
		shown = append(shown, v.Rule.Evidence)
	}
	return searchOut{Page: pg, Attribution: attribution(shown)}, nil
}

// ruleViews reads the rules of a query selecting (id, rule).
func (s *Server) ruleViews(ctx context.Context, q string, at time.Time, args ...any) ([]RuleView, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read transfer rules: %w", err)
	}
	defer rows.Close()
	views := []RuleView{}
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("read transfer rules: %w", err)
		}
		var r transfer.Rule
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("transfer rule %s: %w", id, err)
		}
		s.followable(&r)
		inForce := (r.EffectiveStart.IsZero() || !at.Before(r.EffectiveStart)) && (r.EffectiveEnd.IsZero() || !at.After(r.EffectiveEnd.AddDate(0, 0, 1)))
		views = append(views, RuleView{RuleID: id, SourceInstitution: r.Course.Institution, TargetInstitution: r.Destination, Course: r.Course.String(),
			Outcome: string(r.Outcome), Credit: r.Raw, Parsed: r.Parsed, EffectiveStart: date(r.EffectiveStart), EffectiveEnd: date(r.EffectiveEnd),
			InForce: inForce, Rule: r})
	}
	return views, rows.Err()
}

type detailsIn struct {
	RuleID string `json:"ruleId"`
}

type detailsOut struct {
	RuleView
	// Versions are the agreements for the same course and destination over
	// time (this one included), oldest first.
	Versions    []RuleView `json:"versions"`
	Attribution string     `json:"attribution"`
}

func (s *Server) transferDetails(ctx context.Context, _ *registry.Call, in detailsIn) (detailsOut, error) {
	now := s.now()
	views, err := s.ruleViews(ctx, `SELECT r.id, r.rule FROM tn_transfer_rules r WHERE r.id = ?`, now, in.RuleID)
	if err != nil {
		return detailsOut{}, err
	}
	if len(views) == 0 {
		return detailsOut{}, errs.E(errs.NotFound, "no transfer rule %s (tn_transfer_search and tn_transfer_resolve give rule ids)", in.RuleID)
	}
	v := views[0]
	versions, err := s.ruleViews(ctx, `SELECT r.id, r.rule FROM tn_transfer_rules r WHERE r.source_institution = ? AND r.subject = ? AND r.number = ? AND r.target_institution = ?
		ORDER BY r.effective_start, r.id`, now, v.Rule.Course.Institution, v.Rule.Course.Subject, v.Rule.Course.Number, v.TargetInstitution)
	if err != nil {
		return detailsOut{}, err
	}
	shown := []transfer.Evidence{v.Rule.Evidence}
	for _, o := range versions {
		shown = append(shown, o.Rule.Evidence)
	}
	return detailsOut{RuleView: v, Versions: versions, Attribution: attribution(shown)}, nil
}
