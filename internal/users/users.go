// Package users holds Nexus's users and their API tokens (issue 10): who a
// request acts as. A user has a name, a tier (anonymous, free, paid: it
// sets the daily prompt quota), a role (admin or member) and may be
// disabled. A token is random text shown once, when it is made, and stored
// only as its SHA-256 (tokens carry 256 bits of randomness, so a plain hash
// is as strong as a password hash and can be looked up by value).
package users

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Tiers (the quota package's: a tier sets the daily prompt limit). A
// user's role is one of access control's (principal.Roles).
const (
	Anonymous = string(quota.Anonymous)
	Free      = string(quota.Free)
	Paid      = string(quota.Paid)
)

// TokenPrefix starts every token, so that a leaked one is recognisable (and
// found by secret scanners).
const TokenPrefix = "nxs_"

// User is one user.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Tier      string    `json:"tier"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Token is a token's record (never its text).
type Token struct {
	ID         string     `json:"id"`
	UserID     string     `json:"userId"`
	Label      string     `json:"label"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
	RevokedAt  *time.Time `json:"revokedAt,omitempty"`
}

// Errors of authentication; they say nothing of which part failed to a
// caller (the HTTP front answers 401 alike), but tell them apart in logs.
var (
	ErrUnknownToken = errors.New("unknown token")
	ErrRevoked      = errors.New("revoked token")
	ErrDisabled     = errors.New("disabled user")
)

// Users is the store of users and tokens.
type Users struct {
	st  *store.Store
	now func() time.Time

	// touched is when each token's last_used_at was last written: it is
	// written at most every touchEvery, so that authenticating a request is
	// one indexed read, not a write.
	mu      sync.Mutex
	touched map[string]time.Time
	// cache holds recently authenticated tokens by hash, for CacheFor.
	cache map[string]cached
	// generation counts the times the cache was dropped: a store read that
	// began before a drop is not cached (it may be older than the change
	// that caused the drop).
	generation uint64
	// changed are called after this process changed what the cache holds
	// ([Users.OnChange]).
	changed []func(context.Context)
}

// cached is an authenticated token's user and when it was read.
type cached struct {
	user *User
	at   time.Time
}

// CacheFor is how long an authenticated token is trusted without reading
// the store again: a revoked token, or a disabled user's, stops working
// within this time on every server.
const CacheFor = 5 * time.Second

// touchEvery is how often a token's last use is recorded, at most.
const touchEvery = time.Minute

// New returns the users of st.
func New(st *store.Store) *Users {
	return &Users{st: st, now: store.Now, touched: map[string]time.Time{}, cache: map[string]cached{}}
}

var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._@-]{0,63}$`) })

// CheckName reports why name cannot name a user: 1-64 lower-case letters,
// digits and . _ @ -, starting with a letter or digit.
func CheckName(name string) error {
	if !namePattern().MatchString(name) {
		return errs.Invalid("name", "%q is not a user name: 1-64 lower-case letters, digits and . _ @ -, starting with a letter or digit", name)
	}
	return nil
}

// CheckTier reports why tier is not one of anonymous, free, paid (the one
// tier rule, quota.ParseTier's; stored tiers are lower case).
func CheckTier(tier string) error {
	t, err := quota.ParseTier(tier)
	if err != nil {
		return err
	}
	if string(t) != tier {
		return errs.Invalid("tier", "%q is not a tier: write %q", tier, t)
	}
	return nil
}

// CheckRole reports why role is not one of principal.Roles: admin or
// member.
func CheckRole(role string) error {
	if principal.ValidRole(role) {
		return nil
	}
	return errs.Invalid("role", "%q is not a role: %s", role, strings.Join(principal.Roles(), " or "))
}

// newToken returns a token's text and its hash.
func newToken() (text, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("new token: %w", err)
	}
	text = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return text, HashToken(text), nil
}

// HashToken is the stored form of a token: hex SHA-256 of its text.
func HashToken(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// WellFormed reports whether text has a token's shape (prefix and 43
// base64url characters), so that anything else is refused before a lookup.
func WellFormed(text string) bool {
	if !strings.HasPrefix(text, TokenPrefix) || len(text) != len(TokenPrefix)+43 {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(text[len(TokenPrefix):])
	return err == nil
}

// Add makes user name with a first token, whose text is returned once.
func (u *Users) Add(ctx context.Context, name, tier, role, label string) (*User, string, error) {
	if err := errors.Join(CheckName(name), CheckTier(tier), CheckRole(role)); err != nil {
		return nil, "", err
	}
	now := u.now()
	usr := &User{ID: ulid.Make().String(), Name: name, Tier: tier, Role: role, CreatedAt: now, UpdatedAt: now}
	var text string
	err := u.st.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, u.st.Q(`INSERT INTO users (id, name, tier, role, disabled, created_at, updated_at)
			VALUES (?, ?, ?, ?, 0, ?, ?) ON CONFLICT (name) DO NOTHING`), usr.ID, name, tier, role, store.Micros(now), store.Micros(now))
		if err != nil {
			return fmt.Errorf("add user: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errs.E(errs.Conflict, "user %q exists already", name)
		}
		text, _, err = u.addToken(ctx, tx, usr.ID, label)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return usr, text, nil
}

func (u *Users) addToken(ctx context.Context, tx *sql.Tx, userID, label string) (string, *Token, error) {
	text, hash, err := newToken()
	if err != nil {
		return "", nil, err
	}
	t := &Token{ID: ulid.Make().String(), UserID: userID, Label: label, CreatedAt: u.now()}
	if _, err := tx.ExecContext(ctx, u.st.Q(`INSERT INTO user_tokens (id, user_id, hash, label, created_at) VALUES (?, ?, ?, ?, ?)`),
		t.ID, userID, hash, label, store.Micros(t.CreatedAt)); err != nil {
		return "", nil, fmt.Errorf("add token: %w", err)
	}
	return text, t, nil
}

// AddToken makes another token for user name; its text is returned once.
func (u *Users) AddToken(ctx context.Context, name, label string) (string, *Token, error) {
	var (
		text string
		tok  *Token
	)
	err := u.st.Tx(ctx, func(tx *sql.Tx) error {
		usr, err := u.get(ctx, tx, name)
		if err != nil {
			return err
		}
		text, tok, err = u.addToken(ctx, tx, usr.ID, label)
		return err
	})
	return text, tok, err
}

// Revoke revokes token id (its record id, not its text); revoking twice is
// harmless. An unknown id is NOT_FOUND.
func (u *Users) Revoke(ctx context.Context, id string) error {
	res, err := u.st.DB().ExecContext(ctx, u.st.Q(`UPDATE user_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`), store.Micros(u.now()), id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errs.E(errs.NotFound, "no token %s (nexus tokens list NAME shows a user's tokens)", id)
	}
	u.forget(ctx)
	return nil
}

// forget drops the authentication cache after a change made by this
// process, which takes effect at once here, and tells the functions of
// [Users.OnChange] (other processes forget theirs when they hear of it, or
// within CacheFor).
func (u *Users) forget(ctx context.Context) {
	u.Forget()
	u.mu.Lock()
	fns := slices.Clone(u.changed)
	u.mu.Unlock()
	for _, fn := range fns {
		fn(ctx)
	}
}

// Forget drops the authentication cache: another process revoked a token
// or changed a user, and the next request of every token reads the store.
func (u *Users) Forget() {
	u.mu.Lock()
	clear(u.cache)
	u.generation++
	u.mu.Unlock()
}

// OnChange registers fn, called after this process revokes a token or
// changes a user (what other processes cache for up to CacheFor), so that
// it can tell them to [Users.Forget].
func (u *Users) OnChange(fn func(context.Context)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.changed = append(u.changed, fn)
}

// Authenticate returns the user token text acts as. A token that is not
// well formed, unknown, revoked, or of a disabled user is an error
// (ErrUnknownToken, ErrRevoked, ErrDisabled); nothing else is told.
func (u *Users) Authenticate(ctx context.Context, text string) (*User, error) {
	if !WellFormed(text) {
		return nil, ErrUnknownToken
	}
	hash := HashToken(text)
	now := u.now()
	u.mu.Lock()
	if c, ok := u.cache[hash]; ok && now.Sub(c.at) < CacheFor {
		u.mu.Unlock()
		usr := *c.user
		return &usr, nil
	}
	generation := u.generation
	u.mu.Unlock()
	var (
		tokID, stored string
		revoked       sql.NullInt64
	)
	usr := &User{}
	var disabled int
	var created, updated int64
	err := u.st.DB().QueryRowContext(ctx, u.st.Q(`SELECT t.id, t.hash, t.revoked_at, u.id, u.name, u.tier, u.role, u.disabled, u.created_at, u.updated_at
		FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`), hash).
		Scan(&tokID, &stored, &revoked, &usr.ID, &usr.Name, &usr.Tier, &usr.Role, &disabled, &created, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrUnknownToken
	case err != nil:
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 {
		return nil, ErrUnknownToken
	}
	if revoked.Valid {
		return nil, ErrRevoked
	}
	if disabled != 0 {
		return nil, ErrDisabled
	}
	usr.CreatedAt, usr.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	u.mu.Lock()
	if len(u.cache) > 100_000 {
		clear(u.cache)
	}
	if u.generation == generation {
		kept := *usr
		u.cache[hash] = cached{user: &kept, at: now}
	}
	stale := now.Sub(u.touched[tokID]) >= touchEvery
	if stale {
		if len(u.touched) > 100_000 {
			clear(u.touched)
		}
		u.touched[tokID] = now
	}
	u.mu.Unlock()
	if stale {
		_, _ = u.st.DB().ExecContext(ctx, u.st.Q(`UPDATE user_tokens SET last_used_at = ? WHERE id = ?`), store.Micros(now), tokID)
	}
	return usr, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (u *Users) get(ctx context.Context, q querier, name string) (*User, error) {
	usr := &User{}
	var disabled int
	var created, updated int64
	err := q.QueryRowContext(ctx, u.st.Q(`SELECT id, name, tier, role, disabled, created_at, updated_at FROM users WHERE name = ?`), name).
		Scan(&usr.ID, &usr.Name, &usr.Tier, &usr.Role, &disabled, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.E(errs.NotFound, "no user %q (nexus users list shows them)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	usr.Disabled, usr.CreatedAt, usr.UpdatedAt = disabled != 0, store.FromMicros(created), store.FromMicros(updated)
	return usr, nil
}

// Get returns user name.
func (u *Users) Get(ctx context.Context, name string) (*User, error) {
	return u.get(ctx, u.st.DB(), name)
}

// List returns every user, by name.
func (u *Users) List(ctx context.Context) ([]*User, error) {
	rows, err := u.st.DB().QueryContext(ctx, `SELECT id, name, tier, role, disabled, created_at, updated_at FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []*User
	for rows.Next() {
		usr := &User{}
		var disabled int
		var created, updated int64
		if err := rows.Scan(&usr.ID, &usr.Name, &usr.Tier, &usr.Role, &disabled, &created, &updated); err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		usr.Disabled, usr.CreatedAt, usr.UpdatedAt = disabled != 0, store.FromMicros(created), store.FromMicros(updated)
		out = append(out, usr)
	}
	return out, rows.Err()
}

// Tokens lists user name's tokens, newest first (never their text).
func (u *Users) Tokens(ctx context.Context, name string) ([]*Token, error) {
	usr, err := u.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	rows, err := u.st.DB().QueryContext(ctx, u.st.Q(`SELECT id, user_id, label, created_at, last_used_at, revoked_at FROM user_tokens
		WHERE user_id = ? ORDER BY created_at DESC, id DESC`), usr.ID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []*Token
	for rows.Next() {
		t := &Token{}
		var created int64
		var used, revoked sql.NullInt64
		if err := rows.Scan(&t.ID, &t.UserID, &t.Label, &created, &used, &revoked); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		t.CreatedAt = store.FromMicros(created)
		if used.Valid {
			v := store.FromMicros(used.Int64)
			t.LastUsedAt = &v
		}
		if revoked.Valid {
			v := store.FromMicros(revoked.Int64)
			t.RevokedAt = &v
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Change is what Set changes; nil fields stay as they are.
type Change struct {
	Tier, Role *string
	Disabled   *bool
}

// Set changes user name.
func (u *Users) Set(ctx context.Context, name string, c Change) (*User, error) {
	var checks []error
	if c.Tier != nil {
		checks = append(checks, CheckTier(*c.Tier))
	}
	if c.Role != nil {
		checks = append(checks, CheckRole(*c.Role))
	}
	if err := errors.Join(checks...); err != nil {
		return nil, err
	}
	var out *User
	err := u.st.Tx(ctx, func(tx *sql.Tx) error {
		usr, err := u.get(ctx, tx, name)
		if err != nil {
			return err
		}
		if c.Tier != nil {
			usr.Tier = *c.Tier
		}
		if c.Role != nil {
			usr.Role = *c.Role
		}
		if c.Disabled != nil {
			usr.Disabled = *c.Disabled
		}
		usr.UpdatedAt = u.now()
		disabled := 0
		if usr.Disabled {
			disabled = 1
		}
		if _, err := tx.ExecContext(ctx, u.st.Q(`UPDATE users SET tier = ?, role = ?, disabled = ?, updated_at = ? WHERE id = ?`),
			usr.Tier, usr.Role, disabled, store.Micros(usr.UpdatedAt), usr.ID); err != nil {
			return fmt.Errorf("set user: %w", err)
		}
		out = usr
		return nil
	})
	if err == nil {
		u.forget(ctx)
	}
	return out, err
}

// HasActiveToken reports whether any enabled user has a token that is not
// revoked: whether anyone could authenticate.
func (u *Users) HasActiveToken(ctx context.Context) (bool, error) {
	var n int
	err := u.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM user_tokens t JOIN users u ON u.id = t.user_id
		WHERE t.revoked_at IS NULL AND u.disabled = 0`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("count tokens: %w", err)
	}
	return n > 0, nil
}
