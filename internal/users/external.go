package users

// Users of an identity provider (OAuth resource-server mode): an identity,
// its issuer and subject, names one user, created when first seen.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/store"
)

// errLost is a lost race to create an identity's user: read it again.
var errLost = errors.New("identity created concurrently")

// EnsureExternal returns the user of identity (issuer, subject), creating it
// with a name derived from name (made a valid user name, and unique) when
// the identity is new. tier and role, when not empty, are the provider's
// word: a known user whose tier or role differ is updated. A disabled user
// is ErrDisabled.
func (u *Users) EnsureExternal(ctx context.Context, issuer, subject, name, tier, role string) (*User, error) {
	if tier != "" {
		if err := CheckTier(tier); err != nil {
			return nil, err
		}
	}
	if role != "" {
		if err := CheckRole(role); err != nil {
			return nil, err
		}
	}
	for range 3 {
		usr, err := u.external(ctx, issuer, subject)
		if err != nil {
			return nil, err
		}
		if usr == nil {
			usr, err = u.createExternal(ctx, issuer, subject, name, tier, role)
			if errors.Is(err, errLost) {
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		if usr.Disabled {
			return nil, ErrDisabled
		}
		if (tier != "" && tier != usr.Tier) || (role != "" && role != usr.Role) {
			ch := Change{}
			if tier != "" {
				ch.Tier = &tier
			}
			if role != "" {
				ch.Role = &role
			}
			return u.Set(ctx, usr.Name, ch)
		}
		return usr, nil
	}
	return nil, fmt.Errorf("user of %s %s: %w", issuer, subject, errLost)
}

// external reads the user of an identity; nil when it is new.
func (u *Users) external(ctx context.Context, issuer, subject string) (*User, error) {
	usr := &User{}
	var disabled int
	var created, updated int64
	err := u.st.DB().QueryRowContext(ctx, u.st.Q(`SELECT u.id, u.name, u.tier, u.role, u.disabled, u.created_at, u.updated_at
		FROM user_identities i JOIN users u ON u.id = i.user_id WHERE i.issuer = ? AND i.subject = ?`), issuer, subject).
		Scan(&usr.ID, &usr.Name, &usr.Tier, &usr.Role, &disabled, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read identity: %w", err)
	}
	usr.Disabled, usr.CreatedAt, usr.UpdatedAt = disabled != 0, store.FromMicros(created), store.FromMicros(updated)
	return usr, nil
}

// createExternal makes the user of a new identity; errLost when another
// request made it first.
func (u *Users) createExternal(ctx context.Context, issuer, subject, name, tier, role string) (*User, error) {
	if tier == "" {
		tier = Free
	}
	if role == "" {
		role = principal.Member
	}
	now := u.now()
	usr := &User{ID: ulid.Make().String(), Tier: tier, Role: role, CreatedAt: now, UpdatedAt: now}
	err := u.st.Tx(ctx, func(tx *sql.Tx) error {
		// The identity first: of two first sightings, one inserts it and
		// the other finds it taken (and reads the winner's user).
		res, err := tx.ExecContext(ctx, u.st.Q(`INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (issuer, subject) DO NOTHING`), issuer, subject, usr.ID, store.Micros(now))
		if err != nil {
			return fmt.Errorf("add identity: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errLost
		}
		for _, candidate := range []string{UserName(name), UserName(name) + "-" + shortHash(issuer+"\x00"+subject)} {
			if len(candidate) > 64 {
				candidate = candidate[len(candidate)-64:]
			}
			res, err := tx.ExecContext(ctx, u.st.Q(`INSERT INTO users (id, name, tier, role, disabled, created_at, updated_at)
				VALUES (?, ?, ?, ?, 0, ?, ?) ON CONFLICT (name) DO NOTHING`), usr.ID, candidate, tier, role, store.Micros(now), store.Micros(now))
			if err != nil {
				return fmt.Errorf("add user: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				usr.Name = candidate
				return nil
			}
		}
		return fmt.Errorf("add user of %s: the names %q and its variant are taken", issuer, UserName(name))
	})
	if err != nil {
		return nil, err
	}
	return usr, nil
}

// UserName makes text a valid user name (see CheckName): lower case, other
// characters than letters, digits and . _ @ - replaced by -, starting with
// a letter or digit, at most 57 characters (room for a suffix); "user" when
// nothing is left.
func UserName(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '@', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.TrimLeft(b.String(), "._@-")
	if len(s) > 57 {
		s = s[:57]
	}
	if s == "" {
		return "user"
	}
	return s
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:3])
}
