package workbench

import (
	"context"
	"slices"
	"sync"

	"github.com/nexus-mcp/nexus/internal/config"
)

// Changes are what a [Manager.Reload] changed, each server named
// "toolbox/server".
type Changes struct {
	// Added are servers the new configuration adds; Removed, servers it no
	// longer has; Restarted, servers whose configuration changed (the old
	// one stopped, the new one started).
	Added, Removed, Restarted []string
	// Connecting are the added and restarted servers connected at once
	// (see [Manager.Reload]); the others connect when their toolbox is
	// opened, as at start.
	Connecting []string
}

// Empty reports whether the reload changed no server.
func (c Changes) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Restarted) == 0
}

// Reload applies a new configuration (one [config.Load] accepted, so it
// is valid as a whole) to the toolboxes without a restart:
//
//   - a server whose configuration is unchanged keeps its connection;
//   - a removed server is stopped: its session is closed (a stdio server's
//     process ends) and its tools leave the registry;
//   - a changed server is stopped the same way and started again under its
//     new configuration;
//   - an added server starts as at start: at once when it is Eager, when
//     its toolbox had been opened, or when a client of a surface that
//     lists every tool connected already ([Manager.OpenAll] ran), so that
//     its tools are listed; otherwise when its toolbox is first opened.
//
// The registry's changes reach the surfaces that follow it (their clients
// get notifications/tools/list_changed). Reload returns once the stopped
// servers have ended; it does not wait for the new ones to connect. After
// [Manager.Close] it changes nothing.
func (m *Manager) Reload(ctx context.Context, cfg *config.Config) Changes {
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Changes{}
	}
	old := m.toolboxes
	tbs, dropped, added := m.build(cfg, old)
	// A server replaced under its name waits for the old one to stop and
	// drop its tools before it connects, whoever starts it (a client may
	// open its toolbox while the old one is still stopping).
	stopped := map[string]chan struct{}{}
	for _, s := range dropped {
		stopped[s.toolbox+"/"+s.name] = make(chan struct{})
	}
	for _, s := range added {
		if c, ok := stopped[s.toolbox+"/"+s.name]; ok {
			s.after = c
		}
	}
	m.toolboxes = tbs
	m.lmu.Lock()
	m.listingsVersion++ // other servers: other listings to search
	m.lmu.Unlock()
	for name := range m.opened {
		if !slices.ContainsFunc(tbs, func(tb *toolbox) bool { return tb.name == name }) {
			delete(m.opened, name)
		}
	}
	all := m.all
	m.mu.Unlock()

	var ch Changes
	replaced := map[string]bool{}
	for _, s := range added {
		replaced[s.toolbox+"/"+s.name] = find(old, s.toolbox, s.name) != nil
	}
	// Stopped in parallel (a stdio server may take seconds to exit), and
	// their tools dropped, before any new server registers its own under
	// the same names (server.after).
	var wg sync.WaitGroup
	for _, s := range dropped {
		key := s.toolbox + "/" + s.name
		if !replaced[key] {
			ch.Removed = append(ch.Removed, key)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(stopped[key])
			s.stop()
			m.reg.ReplaceServer(s.toolbox, s.name, nil)
			m.reg.ReplaceExtras(s.toolbox, s.name, nil)
		}()
	}
	wg.Wait()
	for _, s := range added {
		key := s.toolbox + "/" + s.name
		if replaced[key] {
			ch.Restarted = append(ch.Restarted, key)
		} else {
			ch.Added = append(ch.Added, key)
		}
		if s.cfg.Eager || all || m.Opened(s.toolbox) {
			ch.Connecting = append(ch.Connecting, key)
			s.kick()
		}
	}
	slices.Sort(ch.Removed)
	m.log.InfoContext(ctx, "workbench reloaded", "added", ch.Added, "removed", ch.Removed, "restarted", ch.Restarted, "connecting", ch.Connecting)
	return ch
}
