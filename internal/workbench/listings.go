package workbench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// A server's listing is kept (issue 27): the tools it served when it was
// last listed, in memory and, with a store, in table tool_listings
// (migration 029), so that search_tools covers a toolbox no session has
// opened yet, on every replica and after a restart. A listing belongs to a
// configuration of its server ([fingerprint]): a server whose command, URL
// or filters changed is not searched by its old tools. It is written each
// time the server lists its tools: at each connection and on
// notifications/tools/list_changed.

// listing is a server's tools as last listed.
type listing struct {
	fingerprint string
	tools       []*mcp.Tool
	listedAt    time.Time
}

type serverKey struct{ toolbox, server string }

// fingerprint identifies what a server's configuration says about which
// tools it serves: its transport, command, arguments, directory, URL and
// filters, and the names (not the values) of its environment and headers.
func fingerprint(sc *config.Server) string {
	b, _ := json.Marshal(struct {
		Transport, Command, Cwd, URL string
		Args, Filters, Env, Headers  []string
	}{sc.Transport, sc.Command, sc.Cwd, sc.URL, sc.Args, sc.ToolFilters,
		slices.Sorted(maps.Keys(sc.Env)), slices.Sorted(maps.Keys(sc.Headers))})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// loadListings reads the listings kept in the store (none without one).
func (m *Manager) loadListings(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	rows, err := m.store.DB().QueryContext(ctx, `SELECT toolbox, server, fingerprint, tools, listed_at FROM tool_listings`)
	if err != nil {
		return fmt.Errorf("read the servers' listings: %w", err)
	}
	defer rows.Close()
	got := map[serverKey]listing{}
	for rows.Next() {
		var k serverKey
		var l listing
		var tools string
		var at int64
		if err := rows.Scan(&k.toolbox, &k.server, &l.fingerprint, &tools, &at); err != nil {
			return fmt.Errorf("read the servers' listings: %w", err)
		}
		if err := json.Unmarshal([]byte(tools), &l.tools); err != nil {
			m.log.Warn("a server's kept listing does not parse: ignored", "toolbox", k.toolbox, "server", k.server, "err", err)
			continue
		}
		l.listedAt = store.FromMicros(at)
		got[k] = l
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the servers' listings: %w", err)
	}
	m.lmu.Lock()
	for k, l := range got {
		// A listing made here since is kept; one another replica made
		// later replaces it.
		if mine, ok := m.listings[k]; !ok || l.listedAt.After(mine.listedAt) {
			m.listings[k] = l
		}
	}
	m.listingsVersion++
	m.lmu.Unlock()
	return nil
}

// DefaultListingsCheck is how often, at most, a search looks for listings
// that other replicas kept since (a cheap query; the listings are read
// again only when it finds some): Options.ListingsCheck.
const DefaultListingsCheck = 10 * time.Second

// followListings reads the store's listings again when other replicas kept
// new ones since it last looked (at most every listingsCheck).
func (m *Manager) followListings() {
	if m.store == nil {
		return
	}
	m.lmu.Lock()
	if time.Since(m.listingsChecked) < m.listingsCheck {
		m.lmu.Unlock()
		return
	}
	m.listingsChecked = time.Now()
	seen := m.listingsSeen
	m.lmu.Unlock()
	ctx, cancel := context.WithTimeout(m.ctx, 2*time.Second)
	defer cancel()
	var n, last int64
	if err := m.store.DB().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(listed_at), 0) FROM tool_listings`).Scan(&n, &last); err != nil {
		m.log.Warn("look for the servers' listings other replicas kept", "err", err)
		return
	}
	now := [2]int64{n, last}
	if now == seen {
		return
	}
	if err := m.loadListings(ctx); err != nil {
		m.log.Warn("read the servers' listings other replicas kept", "err", err)
		return
	}
	m.lmu.Lock()
	m.listingsSeen = now
	m.lmu.Unlock()
}

// keepListing records the tools s served at its listing, in memory and in
// the store.
func (m *Manager) keepListing(ctx context.Context, s *server, tools []*mcp.Tool) {
	l := listing{fingerprint: s.print, tools: tools, listedAt: time.Now()}
	k := serverKey{s.toolbox, s.name}
	m.lmu.Lock()
	m.listings[k] = l
	m.listingsVersion++
	m.lmu.Unlock()
	if m.store == nil {
		return
	}
	body, err := json.Marshal(tools)
	if err != nil {
		m.log.Warn("keep a server's listing", "toolbox", s.toolbox, "server", s.name, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err = m.store.DB().ExecContext(ctx, m.store.Q(`INSERT INTO tool_listings (toolbox, server, fingerprint, tools, listed_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (toolbox, server) DO UPDATE SET fingerprint = excluded.fingerprint, tools = excluded.tools, listed_at = excluded.listed_at`),
		s.toolbox, s.name, l.fingerprint, string(body), store.Micros(l.listedAt))
	if err != nil {
		m.log.Warn("keep a server's listing", "toolbox", s.toolbox, "server", s.name, "err", err)
	}
}

// ListingsVersion implements [registry.Listings]; it also takes in the
// listings other replicas kept since it last looked (followListings).
func (m *Manager) ListingsVersion() uint64 {
	m.followListings()
	m.lmu.Lock()
	defer m.lmu.Unlock()
	return m.listingsVersion
}

// Listed implements [registry.Listings]: the tools of the configured
// servers whose tools are not in the registry (their toolbox has not been
// opened here), as each last listed them under its present configuration.
func (m *Manager) Listed() []registry.Tool {
	var out []registry.Tool
	for _, tb := range m.list() {
		for _, s := range tb.servers {
			if s.toolsKnown() {
				continue // the registry has them
			}
			m.lmu.Lock()
			l, ok := m.listings[serverKey{s.toolbox, s.name}]
			m.lmu.Unlock()
			if !ok || l.fingerprint != s.print {
				continue
			}
			for _, t := range l.tools {
				id := registry.ID{Toolbox: s.toolbox, Server: s.name, Tool: t.Name}
				if !registry.ValidName(id.Name()) {
					continue
				}
				rt, err := s.registryTool(id, t)
				if err != nil {
					continue
				}
				rt.Handler = nil
				out = append(out, rt)
			}
		}
	}
	return out
}

// Unlisted implements [registry.Listings]: the configured toolboxes with a
// server whose tools are known neither from the registry nor from a kept
// listing (search cannot cover them until they are opened).
func (m *Manager) Unlisted() []string {
	var out []string
	for _, tb := range m.list() {
		for _, s := range tb.servers {
			if s.toolsKnown() {
				continue
			}
			m.lmu.Lock()
			l, ok := m.listings[serverKey{s.toolbox, s.name}]
			m.lmu.Unlock()
			if !ok || l.fingerprint != s.print {
				out = append(out, tb.name)
				break
			}
		}
	}
	return out
}
