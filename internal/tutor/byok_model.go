package tutor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ModelCredential is what calling a user's own model needs: the provider,
// its base URL and the key (opened; for the code that calls the provider,
// never for a tool result or a log).
type ModelCredential struct {
	ID, Provider, BaseURL string
	Key                   []byte
}

// UserModel returns the credential a user's chat turns run on: the one
// with id credentialID, or with "" their most recently added one; nil when
// they have none of that id (or there is no keyring).
func (s *Server) UserModel(ctx context.Context, userID, credentialID string) (*ModelCredential, error) {
	if s.keys.Load() == nil {
		return nil, nil
	}
	c := &ModelCredential{}
	err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT id, provider, base_url FROM tn_credentials WHERE user_id = ?
		AND (? = '' OR id = ?) ORDER BY created_at DESC, id DESC LIMIT 1`), userID, credentialID, credentialID).Scan(&c.ID, &c.Provider, &c.BaseURL)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the user's model credential: %w", err)
	}
	key, err := s.OpenCredentialKey(ctx, userID, c.ID)
	switch {
	case errors.Is(err, errNoKey):
	case err != nil:
		return nil, fmt.Errorf("open the user's model credential %s: %w", c.ID, err)
	default:
		c.Key = key
	}
	return c, nil
}
