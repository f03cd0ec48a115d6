package tutor

// tn_session_ask: a student's message answered by the chat loop with the
// tutor's tools, once per clientEventId.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
)

// SystemPrompt is the tutor's system prompt for tn_session_ask.
const SystemPrompt = "You are a tutor for students in British Columbia planning courses and transfers between institutions. " +
	"Look facts up with your tools before you answer: tn_course_search and tn_course_get for courses, tn_course_prereqs for requisites, " +
	"tn_transfer_resolve and tn_transfer_search for transfer credit. Never invent a course, a rule or a grade. " +
	"When a student asks what their courses are worth somewhere, call tn_transfer_resolve with all their courses and the targetInstitution, " +
	"and answer from its award, not from the list of matches: lead with award.totalCredits (the summary says it in words), " +
	"then what each course earns (award.rules), then what is not counted and why (award.coursesLeft: no credit, a combined agreement " +
	"that needs another course, a doubtful agreement to confirm with the institution, an agreement that ended, an unknown course) and what more courses would earn (award.withinReach). " +
	"Never add up exactMatches: it lists alternatives of the same courses, each course counts once. " +
	"Cite what your answer rests on: each transfer rule you use by its ruleId, course, destination and credit, and its evidence " +
	"(the BC Transfer Guide page and what to search there), and say when a course earns no credit or when you found nothing. " +
	"To recall what the student said in earlier sessions, call exchange_search. " +
	"Answer in Markdown, briefly."

// AskTools are the tools the tutor's model starts with: its course and
// transfer tools (never the user's credentials or sessions).
func (s *Server) AskTools() []string {
	var out []string
	for _, d := range append(s.courseTools(), s.transferTools()...) {
		out = append(out, d.Name)
	}
	return out
}

// ask answers a message of session id through the chat loop, once per
// clientEventId.
func (s *Server) ask(ctx context.Context, id string, in sessionAskIn) (sessionAskOut, error) {
	if s.askFn == nil {
		e := errs.E(errs.UnprocessableEntity, "tn_session_ask needs a language model, and none is configured")
		e.Reason = "no model provider configured"
		return sessionAskOut{}, e
	}
	if in.ClientEventID != "" {
		out, done, err := s.claimAsk(ctx, id, in)
		if err != nil || done {
			return out, err
		}
	}
	response, events, err := s.askFn(ctx, id, in.Message, SystemPrompt, s.AskTools())
	if err != nil {
		if in.ClientEventID != "" {
			// Failed: a retry with the same id asks again.
			s.st.DB().ExecContext(context.WithoutCancel(ctx), s.st.Q(`DELETE FROM tn_asks WHERE conversation_id = ? AND client_event_id = ? AND response IS NULL`), id, in.ClientEventID)
		}
		var ee *errs.Error
		if errors.As(err, &ee) {
			return sessionAskOut{}, ee
		}
		return sessionAskOut{}, errs.E(errs.Unavailable, "%s", err.Error())
	}
	if events == nil {
		events = []string{}
	}
	out := sessionAskOut{Response: response, EventsEmitted: events}
	if in.ClientEventID != "" {
		ev, _ := json.Marshal(events)
		if _, err := s.st.DB().ExecContext(context.WithoutCancel(ctx), s.st.Q(`UPDATE tn_asks SET response = ?, events = ? WHERE conversation_id = ? AND client_event_id = ?`),
			response, string(ev), id, in.ClientEventID); err != nil {
			s.log.Error("store tn_session_ask answer", "session", id, "err", err)
		}
	}
	return out, nil
}

// claimAsk records clientEventId's message before it is answered; done
// reports an earlier answer (returned) or a refusal.
func (s *Server) claimAsk(ctx context.Context, id string, in sessionAskIn) (sessionAskOut, bool, error) {
	h := sha256.Sum256([]byte(in.Message))
	hash := hex.EncodeToString(h[:])
	res, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO tn_asks (conversation_id, client_event_id, message_hash, events, created_at)
		VALUES (?, ?, ?, '[]', ?) ON CONFLICT (conversation_id, client_event_id) DO NOTHING`), id, in.ClientEventID, hash, store.Micros(s.now()))
	if err != nil {
		return sessionAskOut{}, true, fmt.Errorf("record tn_session_ask: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return sessionAskOut{}, false, nil
	}
	var storedHash, events string
	var response sql.NullString
	if err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT message_hash, response, events FROM tn_asks WHERE conversation_id = ? AND client_event_id = ?`),
		id, in.ClientEventID).Scan(&storedHash, &response, &events); err != nil {
		return sessionAskOut{}, true, fmt.Errorf("read tn_session_ask: %w", err)
	}
	if storedHash != hash {
		e := errs.E(errs.Conflict, "clientEventId %q was used for another message of this session; use a new clientEventId", in.ClientEventID)
		e.Field = "clientEventId"
		return sessionAskOut{}, true, e
	}
	if !response.Valid {
		return sessionAskOut{}, true, errs.E(errs.Conflict, "the message of clientEventId %q is being answered; retry in a moment for its answer", in.ClientEventID)
	}
	out := sessionAskOut{Response: response.String, EventsEmitted: []string{}}
	json.Unmarshal([]byte(events), &out.EventsEmitted)
	if !strings.HasPrefix(events, "[") {
		out.EventsEmitted = []string{}
	}
	return out, true, nil
}
