package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// Topics of the events between replicas that keep their configuration,
// keyring and caches in step (SPEC section 7). Each is handled by the
// replicas that did not publish it: the publisher has acted already.
const (
	// TopicConfigChanged: a replica reloaded its configuration file
	// (SIGHUP); every other replica reloads its own (they share one file
	// in a deployment).
	TopicConfigChanged = "config.changed"
	// TopicKeysRotated: nexus keys rotate made a new key current; every
	// replica reads its keyring again.
	TopicKeysRotated = "keys.rotated"
	// TopicUsersChanged: a token was revoked or a user changed; every
	// replica forgets the tokens it authenticated.
	TopicUsersChanged = "users.changed"
	// TopicAccessChanged: a workspace's owner or members changed; every
	// replica forgets its decisions on workspaces.
	TopicAccessChanged = "access.changed"
)

// ErrNoConfig is why a reload does nothing: Nexus was started without a
// configuration file.
var ErrNoConfig = errors.New("no configuration file to reload: Nexus was started without --config")

// Reloaded is what a configuration reload changed.
type Reloaded struct {
	// Path is the file read.
	Path string
	// Servers are the downstream servers added, removed and restarted.
	Servers workbench.Changes
	// Access reports whether the access rules changed.
	Access bool
	// NeedRestart names the sections that changed but apply only after a
	// restart (model, tensions, chat).
	NeedRestart []string
}

// ReloadConfig reads the configuration file again and applies it without
// a restart: the toolboxes and their servers ([workbench.Manager.Reload]:
// clients of the surfaces get notifications/tools/list_changed) and the
// access rules. The model, tensions and chat sections apply at the next start (each is named
// in NeedRestart when it changed). A file that does not load is refused
// as a whole: the error names the file, the place and the reason, and the
// configuration in use stays. With publish, the other replicas are told
// (TopicConfigChanged) and reload their own file.
func (a *App) ReloadConfig(ctx context.Context, publish bool) (*Reloaded, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if a.configPath == "" || a.Workbench == nil {
		return nil, ErrNoConfig
	}
	conf, err := config.Load(a.configPath)
	if err != nil {
		return nil, fmt.Errorf("reload %s: the configuration in use stays: %w", a.configPath, err)
	}
	r := &Reloaded{Path: a.configPath}
	if !reflect.DeepEqual(conf.Access, a.current.Access) {
		// While servers stop and start, the old rules hold too: a toolbox
		// removed with its rule stays restricted until its tools are gone.
		a.Access.SetRules(transitional(a.current.Access, conf.Access))
		r.Access = true
	}
	if !reflect.DeepEqual(conf.Model, a.current.Model) {
		r.NeedRestart = append(r.NeedRestart, "model")
	}
	if !reflect.DeepEqual(conf.Tensions, a.current.Tensions) {
		r.NeedRestart = append(r.NeedRestart, "tensions")
	}
	if !reflect.DeepEqual(conf.Chat, a.current.Chat) {
		r.NeedRestart = append(r.NeedRestart, "chat")
	}
	r.Servers = a.Workbench.Reload(ctx, conf)
	if r.Access {
		a.Access.SetRules(conf.Access)
	}
	a.current = conf
	for _, fn := range a.reloaded {
		fn(conf)
	}
	a.log.InfoContext(ctx, "configuration reloaded", "path", a.configPath, "added", r.Servers.Added, "removed", r.Servers.Removed,
		"restarted", r.Servers.Restarted, "access_rules_changed", r.Access)
	if len(r.NeedRestart) > 0 {
		a.log.WarnContext(ctx, "configuration reloaded: some changes apply only after a restart", "path", a.configPath, "sections", r.NeedRestart)
	}
	if publish {
		a.publish(ctx, TopicConfigChanged, map[string]string{"path": a.configPath})
	}
	return r, nil
}

// OnReload registers fn, called with each configuration ReloadConfig
// applies (serve's per-server proxy follows it this way). Register before
// serving: it is not safe to call concurrently with a reload.
func (a *App) OnReload(fn func(*config.Config)) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	a.reloaded = append(a.reloaded, fn)
}

// ReloadKeyring reads the keyring file again (after nexus keys rotate),
// keeping the one in use when the file has no newer key, and returns the
// version current now. It does nothing when the keyring comes from
// NEXUS_KEYRING or there is none.
func (a *App) ReloadKeyring() (int, error) {
	return a.Tutor.ReloadKeyring()
}

// KeysRotated tells every replica that the keyring has a new current key
// (nexus keys rotate), so that they read it at once rather than when they
// first meet a credential sealed under it.
func (a *App) KeysRotated(ctx context.Context, version int) error {
	if err := a.Events.Publish(ctx, TopicKeysRotated, map[string]int{"version": version}); err != nil {
		return fmt.Errorf("tell the replicas of the rotation: %w", err)
	}
	return nil
}

// transitional are the access rules in force while a reload moves from
// rules old to rules new: every tool rule of both (a tool must satisfy
// each that applies), new's rule of each toolbox, and old's of a toolbox
// new has no rule for (one the reload removes, whose servers may still be
// stopping).
func transitional(old, new config.Access) config.Access {
	t := config.Access{Toolboxes: maps.Clone(new.Toolboxes), Tools: slices.Concat(new.Tools, old.Tools)}
	for name, rule := range old.Toolboxes {
		if _, ok := t.Toolboxes[name]; !ok {
			if t.Toolboxes == nil {
				t.Toolboxes = map[string]config.Rule{}
			}
			t.Toolboxes[name] = rule
		}
	}
	return t
}

// follow wires the events between replicas: this process's changes to what
// others cache are published, and the others' changes are applied here.
// Handlers that take time (a reload) run in a goroutine of the App's own
// ([App.background], which Close cancels and waits for): the bus's
// receiving goroutine must not block.
func (a *App) follow() {
	bus := a.Events
	a.Users.OnChange(func(ctx context.Context) {
		a.publish(ctx, TopicUsersChanged, nil)
		a.tellUsersChanged()
	})
	a.Access.OnChange(func(ctx context.Context) { a.publish(ctx, TopicAccessChanged, nil) })
	others := func(fn func()) func(events.Event) {
		return func(e events.Event) {
			if e.Origin != bus.Origin() { // the publisher has acted already
				fn()
			}
		}
	}
	bus.Subscribe(TopicUsersChanged, others(func() {
		a.Users.Forget()
		a.tellUsersChanged()
	}))
	bus.Subscribe(TopicAccessChanged, others(a.Access.Forget))
	bus.Subscribe(TopicKeysRotated, others(func() { a.background(a.reloadKeys) }))
	bus.Subscribe(TopicConfigChanged, others(func() { a.background(a.reloadFromEvent) }))
	// Events missed while the bus was disconnected: forget and read again.
	bus.OnResync(func(context.Context) {
		a.Users.Forget()
		a.Access.Forget()
		a.tellUsersChanged()
		// Reading files and restarting servers takes time: not on the
		// bus's goroutine.
		a.background(func(ctx context.Context) {
			a.reloadKeys(ctx)
			if a.configPath != "" {
				a.reloadFromEvent(ctx)
			}
		})
	})
}

// OnUsersChanged registers fn, called after a token was revoked or a user
// changed, on this replica or another (users.changed), once this replica's
// users cache was forgotten, so that fn's authentications read the store:
// the chat WebSocket checks its connections' tokens again
// (ws.Server.UsersChanged). fn must not block.
func (a *App) OnUsersChanged(fn func()) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	a.usersChanged = append(a.usersChanged, fn)
}

func (a *App) tellUsersChanged() {
	a.usersMu.Lock()
	fns := slices.Clone(a.usersChanged)
	a.usersMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// reloadKeys reads the keyring again, logging a failure (the lazy reload,
// on a credential sealed under an unknown version, remains).
func (a *App) reloadKeys(ctx context.Context) {
	v, err := a.ReloadKeyring()
	if err != nil {
		a.log.WarnContext(ctx, "reload the keyring after a rotation", "err", err)
		return
	}
	a.log.InfoContext(ctx, "keyring read again after a rotation", "current_version", v)
}

// reloadFromEvent reloads the configuration another replica reloaded,
// logging the outcome.
func (a *App) reloadFromEvent(ctx context.Context) {
	if _, err := a.ReloadConfig(ctx, false); err != nil {
		if errors.Is(err, ErrNoConfig) {
			a.log.InfoContext(ctx, "another replica reloaded its configuration; this one has none (no --config)")
			return
		}
		a.log.ErrorContext(ctx, "configuration not reloaded", "err", err)
	}
}

// publish sends an event to the other replicas, logging a failure: the
// change is made, and they learn of it within their cache's lifetime.
func (a *App) publish(ctx context.Context, topic string, data any) {
	if err := a.Events.Publish(context.WithoutCancel(ctx), topic, data); err != nil {
		a.log.WarnContext(ctx, "tell the other replicas", "topic", topic, "err", err)
	}
}
