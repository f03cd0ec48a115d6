package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// The user domain's tools without credentials: quota, subscription and
// preferences of the user a call acts as (registry.Call.User). The BYOK
// tools come with the credential store.
func (s *Server) userTools() []registry.Def {
	d := func(name, desc string, readOnly bool, h registry.Typed) registry.Def {
		return registry.Def{Name: name, Description: desc, ReadOnly: readOnly, Family: registry.Tutor, Schema: schema(name), Handler: h}
	}
	return []registry.Def{
		d("tn_user_quota", "Get the current user's prompt quota: prompts used today (UTC), the tier's daily limit, what remains and when it resets. Prompts answered with the user's own model credentials (BYOK) are not counted.", true, registry.Handle(s.userQuota)),
		d("tn_user_subscription", "Get the current user's subscription: their tier (anonymous, free or paid), its daily prompt limit, and who sets it (an administrator; there is no payment provider).", true, registry.Handle(s.userSubscription)),
		d("tn_user_preferences_get", "Get the current user's preferences (theme, voice, language, home and target institutions, program, tool approval in the chat).", true, registry.Handle(s.userPreferencesGet)),
		d("tn_user_preferences_set", "Update the current user's preferences: the fields given replace theirs, the others stay; an empty string clears a text field.", false, registry.Handle(s.userPreferencesSet)),
	}
}

// userTier is the call's user's tier for the quota.
func userTier(c *registry.Call) (quota.Tier, error) {
	t, err := quota.ParseTier(c.User.Tier)
	if err != nil {
		return "", fmt.Errorf("user %s has tier %q: %w", c.User.Name, c.User.Tier, err)
	}
	return t, nil
}

type quotaOut struct {
	User      string    `json:"user"`
	Tier      string    `json:"tier"`
	Window    string    `json:"window"`
	Current   int       `json:"current"`
	Max       int       `json:"max"`
	Remaining int       `json:"remaining"`
	ResetAt   time.Time `json:"resetAt"`
	// ByokCounted is always false: prompts answered with the user's own
	// credentials do not count.
	ByokCounted bool `json:"byokCounted"`
}

type noArgs struct{}

func (s *Server) userQuota(ctx context.Context, c *registry.Call, _ noArgs) (quotaOut, error) {
	tier, err := userTier(c)
	if err != nil {
		return quotaOut{}, err
	}
	u, err := s.quotas.Peek(ctx, c.User.ID, tier, s.now())
	if err != nil {
		return quotaOut{}, err
	}
	return quotaOut{User: c.User.Name, Tier: string(tier), Window: u.Window, Current: u.Current, Max: u.Max, Remaining: u.Remaining(), ResetAt: u.ResetAt}, nil
}

type subscriptionOut struct {
	User       string `json:"user"`
	Tier       string `json:"tier"`
	Status     string `json:"status"`
	DailyLimit int    `json:"dailyPromptLimit"`
	ManagedBy  string `json:"managedBy"`
}

func (s *Server) userSubscription(_ context.Context, c *registry.Call, _ noArgs) (subscriptionOut, error) {
	tier, err := userTier(c)
	if err != nil {
		return subscriptionOut{}, err
	}
	limit, err := s.quotas.Limits().Max(tier)
	if err != nil {
		return subscriptionOut{}, err
	}
	return subscriptionOut{User: c.User.Name, Tier: string(tier), Status: "active", DailyLimit: limit,
		ManagedBy: "administrator (nexus users set NAME --tier TIER); there is no payment provider"}, nil
}

// Preferences are a user's settings; every field is optional. The schema is
// tn_user_preferences_set's (schemas/tn_user_preferences_set.json) and
// grows additively.
type Preferences struct {
	Theme             *string `json:"theme,omitempty"`
	Voice             *Voice  `json:"voice,omitempty"`
	Language          *string `json:"language,omitempty"`
	HomeInstitution   *string `json:"homeInstitution,omitempty"`
	TargetInstitution *string `json:"targetInstitution,omitempty"`
	Program           *string `json:"program,omitempty"`
	// ToolApproval is when the web chat asks before running a tool: never,
	// always, or writes (tools not annotated read-only); unset: the
	// server's default (the configuration's chat.toolApproval).
	ToolApproval *string `json:"toolApproval,omitempty"`
}

// Voice are the spoken-answer settings.
type Voice struct {
	Enabled bool     `json:"enabled"`
	Speed   *float64 `json:"speed,omitempty"`
}

type preferencesOut struct {
	User        string      `json:"user"`
	Preferences Preferences `json:"preferences"`
	UpdatedAt   *time.Time  `json:"updatedAt,omitempty"`
	// Defaults are what applies where a preference is unset.
	Defaults PreferenceDefaults `json:"defaults"`
}

// PreferenceDefaults are the server's values of the preferences a user
// has not set.
type PreferenceDefaults struct {
	// ToolApproval is the chat's tool approval configured for the server
	// (chat.toolApproval): never, always or writes.
	ToolApproval string `json:"toolApproval"`
}

func (s *Server) preferences(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, userID string) (Preferences, *time.Time, error) {
	var raw string
	var updated int64
	err := q.QueryRowContext(ctx, s.st.Q(`SELECT preferences, updated_at FROM tn_user_preferences WHERE user_id = ?`), userID).Scan(&raw, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Preferences{}, nil, nil
	}
	if err != nil {
		return Preferences{}, nil, fmt.Errorf("read preferences: %w", err)
	}
	var p Preferences
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Preferences{}, nil, fmt.Errorf("preferences of %s: %w", userID, err)
	}
	t := store.FromMicros(updated)
	return p, &t, nil
}

func (s *Server) userPreferencesGet(ctx context.Context, c *registry.Call, _ noArgs) (preferencesOut, error) {
	p, at, err := s.preferences(ctx, s.st.DB(), c.User.ID)
	if err != nil {
		return preferencesOut{}, err
	}
	return preferencesOut{User: c.User.Name, Preferences: p, UpdatedAt: at, Defaults: s.defaults}, nil
}

// preferencesIn is a partial update: a field given replaces the stored
// one, an empty string clears it (a top-level null means "not given" on
// every tool, so it cannot clear).
type preferencesIn struct {
	Theme             *string `json:"theme,omitempty"`
	Voice             *Voice  `json:"voice,omitempty"`
	Language          *string `json:"language,omitempty"`
	HomeInstitution   *string `json:"homeInstitution,omitempty"`
	TargetInstitution *string `json:"targetInstitution,omitempty"`
	Program           *string `json:"program,omitempty"`
	ToolApproval      *string `json:"toolApproval,omitempty"`
}

// apply sets *dst from v: nil leaves it, "" clears it.
func apply(dst **string, v *string) {
	switch {
	case v == nil:
	case *v == "":
		*dst = nil
	default:
		*dst = v
	}
}

func (s *Server) userPreferencesSet(ctx context.Context, c *registry.Call, in preferencesIn) (preferencesOut, error) {
	for field, v := range map[string]*string{"homeInstitution": in.HomeInstitution, "targetInstitution": in.TargetInstitution} {
		if v != nil && *v != "" {
			if _, err := s.institutionArg(field, *v); err != nil {
				return preferencesOut{}, err
			}
		}
	}
	var out preferencesOut
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		p, _, err := s.preferences(ctx, tx, c.User.ID)
		if err != nil {
			return err
		}
		apply(&p.Theme, in.Theme)
		apply(&p.Language, in.Language)
		apply(&p.HomeInstitution, in.HomeInstitution)
		apply(&p.TargetInstitution, in.TargetInstitution)
		apply(&p.Program, in.Program)
		apply(&p.ToolApproval, in.ToolApproval)
		if in.Voice != nil {
			p.Voice = in.Voice
		}
		b, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode preferences: %w", err)
		}
		now := s.now()
		if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_user_preferences (user_id, preferences, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET preferences = excluded.preferences, updated_at = excluded.updated_at`),
			c.User.ID, string(b), store.Micros(now)); err != nil {
			return fmt.Errorf("write preferences: %w", err)
		}
		out = preferencesOut{User: c.User.Name, Preferences: p, UpdatedAt: &now, Defaults: s.defaults}
		return nil
	})
	return out, err
}

// ToolApproval is user userID's tool approval setting for the chat (never,
// always or writes; tn_user_preferences_set toolApproval), or "" when they
// set none.
func (s *Server) ToolApproval(ctx context.Context, userID string) (string, error) {
	p, _, err := s.preferences(ctx, s.st.DB(), userID)
	if err != nil || p.ToolApproval == nil {
		return "", err
	}
	return *p.ToolApproval, nil
}
