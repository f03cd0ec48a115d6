package tutor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/secrets"
	"github.com/nexus-mcp/nexus/internal/store"
)

// BYOK (issue 10): a user's own model credentials. An API key is sealed
// with the keyring (internal/secrets) bound to "user:ID/credential:ID" and
// is never shown again: lists show a keyed fingerprint and a mask. Base
// URLs are checked so that a user cannot make the server call internal
// addresses (see checkBaseURL).

// Providers and their default base URLs ("" means the base URL is required).
var byokProviders = map[string]struct {
	defaultURL string
	key        bool
}{
	"openai":    {"https://api.openai.com/v1", true},
	"anthropic": {"https://api.anthropic.com", true},
	"ollama":    {"", false},
}

func (s *Server) byokTools() []registry.Def {
	d := func(name, desc string, readOnly bool, h registry.Typed) registry.Def {
		return registry.Def{Name: name, Description: desc, ReadOnly: readOnly, Family: registry.Tutor, Schema: schema(name), Handler: h}
	}
	return []registry.Def{
		d("tn_user_byok_add", "Add one of the current user's own model credentials (bring your own key): openai (API key; base URL optional, for OpenAI-compatible servers), anthropic (API key) or ollama (base URL, no key). The key is stored encrypted and never shown again; base URLs must be public https addresses.", false, registry.Handle(s.byokAdd)),
		d("tn_user_byok_list", "List the current user's model credentials: provider, label, base URL, a fingerprint and a masked key; never the key itself.", true, registry.Handle(s.byokList)),
		d("tn_user_byok_delete", "Delete one of the current user's model credentials by id.", false, registry.Handle(s.byokDelete)),
	}
}

// Credential is a stored credential as the tools show it: never the key.
type Credential struct {
	ID          string    `json:"id"`
	Provider    string    `json:"provider"`
	Label       string    `json:"label"`
	BaseURL     string    `json:"baseUrl"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	MaskedKey   string    `json:"maskedKey,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// CredentialAAD binds a credential's sealed key to its owner and row.
func CredentialAAD(userID, id string) []byte {
	return []byte("user:" + userID + "/credential:" + id)
}

// keyring is the server's keyring, or SERVICE_UNAVAILABLE without one.
func (s *Server) keyring() (*secrets.Keyring, error) {
	kr := s.keys.Load()
	if kr == nil {
		return nil, errs.E(errs.Unavailable, "model credentials (BYOK) need a keyring: set NEXUS_KEYRING (required with PostgreSQL when Nexus has no data directory)")
	}
	return kr, nil
}

// newerKeyring reads the keyring again when sv was sealed under a version
// newer than kr's (a rotation since this process started) and returns it,
// or kr when there is nothing newer to read.
func (s *Server) newerKeyring(kr *secrets.Keyring, sv secrets.Sealed) (*secrets.Keyring, error) {
	if s.reloadKeys == nil || sv.KeyVersion <= kr.Current() {
		return kr, nil
	}
	nk, err := s.reloadKeys()
	if err != nil {
		return nil, fmt.Errorf("reload the keyring: %w", err)
	}
	if nk.Current() > kr.Current() {
		s.keys.CompareAndSwap(kr, nk)
	}
	return nk, nil
}

// ReloadKeyring reads the keyring again (nexus keys rotate told this
// process of a new current key) and uses it when its current version is
// newer than the one in use; it returns the version current now (0 without
// a keyring). Without a keyring file (NEXUS_KEYRING, or no keyring) it
// changes nothing.
func (s *Server) ReloadKeyring() (int, error) {
	kr := s.keys.Load()
	switch {
	case kr == nil:
		return 0, nil
	case s.reloadKeys == nil:
		return kr.Current(), nil
	}
	nk, err := s.reloadKeys()
	if err != nil {
		return kr.Current(), fmt.Errorf("reload the keyring: %w", err)
	}
	if nk.Current() > kr.Current() && s.keys.CompareAndSwap(kr, nk) {
		return nk.Current(), nil
	}
	return s.keys.Load().Current(), nil
}

type byokAddIn struct {
	Provider string `json:"provider"`
	Label    string `json:"label"`
	APIKey   string `json:"apiKey,omitempty"`
	BaseURL  string `json:"baseUrl,omitempty"`
}

func (s *Server) byokAdd(ctx context.Context, c *registry.Call, in byokAddIn) (Credential, error) {
	kr, err := s.keyring()
	if err != nil {
		return Credential{}, err
	}
	p, ok := byokProviders[in.Provider]
	if !ok {
		return Credential{}, errs.Invalid("provider", "must be openai, anthropic or ollama, got %q", in.Provider)
	}
	label := strings.TrimSpace(in.Label)
	if label == "" || len(label) > 100 || strings.ContainsFunc(label, unicode.IsControl) {
		return Credential{}, errs.Invalid("label", "must be 1 to 100 characters of text")
	}
	switch {
	case p.key && in.APIKey == "":
		return Credential{}, errs.Invalid("apiKey", "%s needs an API key", in.Provider)
	case !p.key && in.APIKey != "":
		return Credential{}, errs.Invalid("apiKey", "%s takes no API key", in.Provider)
	case len(in.APIKey) > 4096 || (p.key && len(in.APIKey) < 8) || strings.ContainsFunc(in.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		// Never quote the key, even a malformed one.
		return Credential{}, errs.Invalid("apiKey", "must be 8 to 4096 characters without spaces or control characters")
	}
	// The providers' own URLs are the server's, not the user's: only a
	// given base URL is checked.
	base := p.defaultURL
	if in.BaseURL != "" {
		if base, err = s.checkBaseURL(ctx, in.BaseURL); err != nil {
			return Credential{}, err
		}
	} else if base == "" {
		return Credential{}, errs.Invalid("baseUrl", "%s needs a base URL", in.Provider)
	}
	now := s.now()
	cr := Credential{ID: ulid.Make().String(), Provider: in.Provider, Label: label, BaseURL: base, CreatedAt: now}
	var sealed sql.NullString
	if in.APIKey != "" {
		sv, err := kr.Seal([]byte(in.APIKey), CredentialAAD(c.User.ID, cr.ID))
		if err != nil {
			return Credential{}, fmt.Errorf("seal the key: %w", err)
		}
		sealed = sql.NullString{String: sv.String(), Valid: true}
		cr.Fingerprint, cr.MaskedKey = kr.Fingerprint([]byte(in.APIKey)), secrets.Mask(in.APIKey)
	}
	err = s.st.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, s.st.Q(`SELECT COUNT(*) FROM tn_credentials WHERE user_id = ? AND label = ?`), c.User.ID, label).Scan(&n); err != nil {
			return fmt.Errorf("read credentials: %w", err)
		}
		if n > 0 {
			return &errs.Error{Code: errs.Conflict, Field: "label", Message: fmt.Sprintf("you already have a credential labelled %q; delete it or choose another label", label)}
		}
		_, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_credentials (id, user_id, provider, label, base_url, sealed, fingerprint, masked, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			cr.ID, c.User.ID, cr.Provider, cr.Label, cr.BaseURL, sealed, cr.Fingerprint, cr.MaskedKey, store.Micros(now), store.Micros(now))
		if err != nil {
			return fmt.Errorf("write credential: %w", err)
		}
		return nil
	})
	if err != nil {
		// Two adds of one label at once: the unique index refuses the
		// second, which is the same conflict.
		var n int
		if errs.CodeOf(err) != errs.Conflict && s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT COUNT(*) FROM tn_credentials WHERE user_id = ? AND label = ?`), c.User.ID, label).Scan(&n) == nil && n > 0 {
			return Credential{}, &errs.Error{Code: errs.Conflict, Field: "label", Message: fmt.Sprintf("you already have a credential labelled %q; delete it or choose another label", label)}
		}
		return Credential{}, err
	}
	return cr, nil
}

type byokListIn struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

func (s *Server) byokList(ctx context.Context, c *registry.Call, in byokListIn) (Page[Credential], error) {
	if _, err := s.keyring(); err != nil {
		return Page[Credential]{}, err
	}
	const tool = "tn_user_byok_list"
	offset, size, err := s.window(tool, in.Limit, in.Cursor, c.User.ID)
	if err != nil {
		return Page[Credential]{}, err
	}
	var total int
	if err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT COUNT(*) FROM tn_credentials WHERE user_id = ?`), c.User.ID).Scan(&total); err != nil {
		return Page[Credential]{}, fmt.Errorf("count credentials: %w", err)
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, provider, label, base_url, fingerprint, masked, created_at FROM tn_credentials
		WHERE user_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`), c.User.ID, size, offset)
	if err != nil {
		return Page[Credential]{}, fmt.Errorf("list credentials: %w", err)
	}
	defer rows.Close()
	var items []Credential
	for rows.Next() {
		var cr Credential
		var created int64
		if err := rows.Scan(&cr.ID, &cr.Provider, &cr.Label, &cr.BaseURL, &cr.Fingerprint, &cr.MaskedKey, &created); err != nil {
			return Page[Credential]{}, fmt.Errorf("list credentials: %w", err)
		}
		cr.CreatedAt = store.FromMicros(created)
		items = append(items, cr)
	}
	if err := rows.Err(); err != nil {
		return Page[Credential]{}, fmt.Errorf("list credentials: %w", err)
	}
	return counted(s, items, total, offset, size, tool, c.User.ID), nil
}

type byokDeleteIn struct {
	ID string `json:"id"`
}

type byokDeleteOut struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (s *Server) byokDelete(ctx context.Context, c *registry.Call, in byokDeleteIn) (byokDeleteOut, error) {
	if _, err := s.keyring(); err != nil {
		return byokDeleteOut{}, err
	}
	if in.ID == "" {
		return byokDeleteOut{}, errs.Invalid("id", "is required")
	}
	// Another user's credential is as absent as one that never was: the
	// answer discloses nothing.
	res, err := s.st.DB().ExecContext(ctx, s.st.Q(`DELETE FROM tn_credentials WHERE id = ? AND user_id = ?`), in.ID, c.User.ID)
	if err != nil {
		return byokDeleteOut{}, fmt.Errorf("delete credential: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return byokDeleteOut{}, fmt.Errorf("delete credential: %w", err)
	} else if n == 0 {
		return byokDeleteOut{}, errs.Missing("credential", in.ID)
	}
	return byokDeleteOut{ID: in.ID, Deleted: true}, nil
}

// internalPrefixes are address ranges a base URL may not reach, besides
// those netip classifies (loopback, private, link-local, multicast,
// unspecified): shared address space, IETF protocol assignments,
// benchmarking, reserved, and NAT64, which maps to any IPv4 address.
var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// internal reports whether a is an address the server must not call for a
// user.
func internal(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || !a.IsValid() {
		return true
	}
	for _, p := range internalPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// lookup resolves a base URL's host: the system's resolver, or a test's.
func (s *Server) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if s.resolve != nil {
		return s.resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// resolveTimeout bounds the look-up of a base URL's host.
const resolveTimeout = 3 * time.Second

// checkBaseURL validates a base URL and returns it normalized: https (or
// http to a loopback host when the server allows it), no userinfo, query
// or fragment, and a host that is, or resolves only to, public addresses
// (loopback ones too when allowed). The check runs when the credential is
// added; whatever calls the provider must check the address it dials as
// well (a name may resolve elsewhere later).
func (s *Server) checkBaseURL(ctx context.Context, raw string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", errs.Invalid("baseUrl", format, args...)
	}
	if len(raw) > 2048 {
		return bad("is longer than 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return bad("must be an absolute URL such as https://api.example.com/v1")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("must use https")
	case u.User != nil:
		return bad("must not contain a user name or password; give the key as apiKey")
	case u.RawQuery != "" || u.ForceQuery:
		return bad("must not contain a query string")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("must not contain a fragment")
	}
	host := strings.ToLower(u.Hostname())
	if port := u.Port(); port != "" {
		if n, err := netip.ParseAddrPort("0.0.0.0:" + port); err != nil || n.Port() == 0 {
			return bad("has an invalid port %q", port)
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return bad("must not name a network interface")
		}
		addrs = []netip.Addr{a}
	} else {
		last := host[strings.LastIndex(host, ".")+1:]
		if last == "" || strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
			// 2130706433, 0x7f.1, 127.1: forms some resolvers read as addresses.
			return bad("host %q is not a host name or an IP address in standard form", host)
		}
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		} else {
			lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
			addrs, err = s.lookup(lctx, host)
			cancel()
			if err != nil || len(addrs) == 0 {
				return bad("host %q does not resolve", host)
			}
		}
	}
	loopback := true
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsLoopback() && s.allowLoopback {
			continue
		}
		loopback = false
		if a.IsLoopback() {
			return bad("host %q is an internal address (loopback), which this server does not allow: model providers must be public "+
				"(a server started with %s=1 allows loopback hosts, e.g. a local Ollama)", host, AllowLoopbackEnv)
		}
		if internal(a) {
			return bad("host %q is an internal address (loopback, private, link-local or reserved); model providers must be public", host)
		}
	}
	if u.Scheme == "http" && !loopback {
		return bad("must use https (http is allowed only to a loopback host, when the server allows it)")
	}
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// ModelHTTPClient is the HTTP client for calling a user's model provider:
// it checks every address it connects to (a name may resolve elsewhere
// than when the credential was added: DNS rebinding) as checkBaseURL does,
// and follows no redirect to another host. The check is at connect time,
// after resolution, so it holds for whatever address is actually dialled.
func (s *Server) ModelHTTPClient(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("model provider address %q: %w", address, err)
		}
		if a := ap.Addr().Unmap(); internal(a) && !(a.IsLoopback() && s.allowLoopback) {
			if a.IsLoopback() {
				return fmt.Errorf("model provider address %s is internal (loopback): refused; a server started with %s=1 allows loopback hosts", a, AllowLoopbackEnv)
			}
			return fmt.Errorf("model provider address %s is internal: refused", a)
		}
		return nil
	}}
	tr := &http.Transport{DialContext: d.DialContext, Proxy: nil, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 10 * time.Second, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("model provider: too many redirects")
		}
		if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
			return fmt.Errorf("model provider redirected to another host (%s): refused", req.URL.Host)
		}
		return nil
	}}
}

// RewrapCredentials re-wraps every stored credential's data key under kr's
// current key-encryption key (secrets.Keyring.Rewrap: the ciphertext of the
// key itself is unchanged), batch rows per transaction, and returns how many
// rows it rewrapped. Rows already under the current version are left as
// they are, so running it again after a rotation is safe.
func RewrapCredentials(ctx context.Context, st *store.Store, kr *secrets.Keyring, batch int) (int, error) {
	if batch < 1 {
		batch = 500
	}
	total, after := 0, ""
	for {
		n, last, err := rewrapBatch(ctx, st, kr, after, batch)
		total += n
		if err != nil {
			return total, err
		}
		if last == "" {
			return total, nil
		}
		after = last
	}
}

// rewrapBatch rewraps the credentials with ids after after, at most batch of
// them, in one transaction; last is the last id seen, "" at the end.
func rewrapBatch(ctx context.Context, st *store.Store, kr *secrets.Keyring, after string, batch int) (n int, last string, err error) {
	err = st.Tx(ctx, func(tx *sql.Tx) error {
		n, last = 0, ""
		rows, err := tx.QueryContext(ctx, st.Q(`SELECT id, sealed FROM tn_credentials WHERE id > ? AND sealed IS NOT NULL ORDER BY id LIMIT ?`), after, batch)
		if err != nil {
			return fmt.Errorf("read credentials: %w", err)
		}
		type row struct{ id, sealed string }
		var todo []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.sealed); err != nil {
				rows.Close()
				return fmt.Errorf("read credentials: %w", err)
			}
			todo = append(todo, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read credentials: %w", err)
		}
		for _, r := range todo {
			sv, err := secrets.ParseSealed(r.sealed)
			if err != nil {
				return fmt.Errorf("credential %s: %w", r.id, err)
			}
			if sv.KeyVersion == kr.Current() {
				continue
			}
			nv, err := kr.Rewrap(sv)
			if err != nil {
				return fmt.Errorf("credential %s: %w", r.id, err)
			}
			if _, err := tx.ExecContext(ctx, st.Q(`UPDATE tn_credentials SET sealed = ? WHERE id = ?`), nv.String(), r.id); err != nil {
				return fmt.Errorf("rewrap credential %s: %w", r.id, err)
			}
			n++
		}
		if len(todo) == batch {
			last = todo[len(todo)-1].id
		}
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	return n, last, nil
}

// errNoKey is what opening a credential without a key reports.
var errNoKey = errors.New("credential has no key")

// OpenCredentialKey returns the API key of the user's credential id, for the
// code that calls the provider (never for a tool result).
func (s *Server) OpenCredentialKey(ctx context.Context, userID, id string) ([]byte, error) {
	kr, err := s.keyring()
	if err != nil {
		return nil, err
	}
	var sealed sql.NullString
	err = s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT sealed FROM tn_credentials WHERE id = ? AND user_id = ?`), id, userID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.Missing("credential", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read credential: %w", err)
	}
	if !sealed.Valid {
		return nil, errNoKey
	}
	sv, err := secrets.ParseSealed(sealed.String)
	if err != nil {
		return nil, fmt.Errorf("credential %s: %w", id, err)
	}
	if kr, err = s.newerKeyring(kr, sv); err != nil {
		return nil, err
	}
	return kr.Open(sv, CredentialAAD(userID, id))
}
