package vault

import (
	"context"
	"embed"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// The agents, as servers of Nexus's own toolbox: each is one tool on the
// agents surface (contentManager with mode readContent...), its modes are
// its tools.
const (
	ContentManager = "contentManager"
	VaultManager   = "vaultManager"
	VaultLibrarian = "vaultLibrarian"
	MemoryManager  = "memoryManager"
)

//go:embed schemas/*.json
var schemas embed.FS

// Server serves the configured vaults' agents.
type Server struct {
	vaults []*Vault // in the configuration's order: the first is the default
	libs   map[*Vault]*library
	log    *slog.Logger
	// memoryManager's store: its workspaces and states, and its sessions
	// (conversations); access decides who uses a workspace.
	st     *store.Store
	conv   *conversation.Store
	access Workspaces
	// bound caches each workspace's vault ("" for none): a workspace's
	// vault never changes once it is created.
	bound sync.Map

	stop context.CancelFunc
	done sync.WaitGroup
}

// Options are what a Server needs besides its vaults.
type Options struct {
	// Store and Conversations keep memoryManager's workspaces, states and
	// sessions; without them memoryManager is not served.
	Store         *store.Store
	Conversations *conversation.Store
	Logger        *slog.Logger
}

// NewServer serves vaults (the first is the one a call that names none
// uses). Their notes are indexed and watched once [Server.Start] runs.
func NewServer(vaults []*Vault, o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{vaults: vaults, libs: map[*Vault]*library{}, log: log, st: o.Store, conv: o.Conversations}
	for _, v := range vaults {
		s.libs[v] = newLibrary(v, log)
	}
	return s
}

// Start indexes each vault's notes and then follows its folder's changes,
// in the background, until [Server.Close]. Searches wait for a vault's
// first index.
func (s *Server) Start() {
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	for _, l := range s.libs {
		s.done.Go(func() {
			if err := l.run(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("vault: indexing or watching failed: edits made outside Nexus are not searchable until it restarts", "vault", l.v.Name, "err", err)
			}
		})
	}
}

// Close stops indexing and watching, and waits for both to end.
func (s *Server) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.done.Wait()
	return nil
}

// touched tells v's library what an edit changed.
func (s *Server) touched(v *Vault, paths ...string) {
	if l := s.libs[v]; l != nil {
		select {
		case <-l.ready:
			l.touched(paths...)
		default: // the first index is still being built: it will read them
		}
	}
}

// Register adds the agents' modes to reg (nothing without a vault).
func (s *Server) Register(reg *registry.Registry) error {
	if len(s.vaults) == 0 {
		return nil
	}
	if err := registry.AddAll(reg, registry.BuiltinToolbox, ContentManager, s.contentModes()...); err != nil {
		return err
	}
	if err := registry.AddAll(reg, registry.BuiltinToolbox, VaultManager, s.managerModes()...); err != nil {
		return err
	}
	if err := registry.AddAll(reg, registry.BuiltinToolbox, VaultLibrarian, s.librarianModes()...); err != nil {
		return err
	}
	if s.st == nil || s.conv == nil {
		return nil
	}
	if err := registry.AddAll(reg, registry.BuiltinToolbox, VaultLibrarian, s.searchMemoryMode()); err != nil {
		return err
	}
	return registry.AddAll(reg, registry.BuiltinToolbox, MemoryManager, s.memoryModes()...)
}

// UseAccess sets who may use which workspace (memoryManager's workspaces
// are Nexus workspaces, with their owners and members).
func (s *Server) UseAccess(a Workspaces) { s.access = a }

// vaultFor is the vault a call names (its "vault" argument); without one,
// the vault of the call's workspace when it is a memoryManager workspace
// bound to a vault, else the first.
func (s *Server) vaultFor(ctx context.Context, c *registry.Call, name string) (*Vault, error) {
	if name != "" || c == nil || s.st == nil || c.Workspace == "" {
		return s.vault(name)
	}
	if bound, ok := s.bound.Load(c.Workspace); ok {
		return s.vault(bound.(string))
	}
	bound := ""
	if w, err := s.loadWorkspaceRow(ctx, s.st.DB(), c.Workspace); err == nil && w != nil {
		bound = w.Vault
	}
	if v, err := s.vault(bound); err == nil {
		s.bound.Store(c.Workspace, bound)
		return v, nil
	}
	return s.vault("") // a workspace bound to a vault no longer configured
}

// vault is the vault a call names (its "vault" argument), or the first.
func (s *Server) vault(name string) (*Vault, error) {
	if name == "" {
		return s.vaults[0], nil
	}
	names := make([]string, len(s.vaults))
	for i, v := range s.vaults {
		if strings.EqualFold(v.Name, name) {
			return v, nil
		}
		names[i] = v.Name
	}
	return nil, errs.E(errs.NotFound, "Vault '%s' not found. Available vaults: %s", name, strings.Join(names, ", "))
}

// result is the original's success: {success: true, data}, with
// recommendations for the modes that give them.
type result struct {
	Success         bool             `json:"success"`
	Data            any              `json:"data"`
	Recommendations []recommendation `json:"recommendations,omitempty"`
}

type recommendation struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func ok(data any, recs ...recommendation) result {
	return result{Success: true, Data: data, Recommendations: recs}
}

// schema is the embedded input schema of a mode (schemas/<name>.json).
func schema(name string) json.RawMessage {
	b, _ := schemas.ReadFile("schemas/" + name + ".json")
	return b
}

// def is a mode of an agent.
func def(name, desc string, readOnly bool, h registry.Typed) registry.Def {
	return registry.Def{Name: name, Description: desc, ReadOnly: readOnly, Family: registry.Vault, Schema: schema(name), Handler: h}
}

// utf16Len is the length of s as the original counted it (JavaScript
// strings: UTF-16 code units).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
