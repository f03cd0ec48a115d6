// Package tutor is the Tutor Nexus tool server (seed 001, ADR-012; SPEC
// section 3): tutoring sessions (tn_session_*), the course catalog
// (tn_course_*) and transfer credit between British Columbia institutions
// (tn_transfer_*), on data imported from the BC Transfer Guide, Langara
// College and Simon Fraser University (see [Import]).
//
// Tools by file: sessions.go (tn_session_*), courses.go and sections.go
// (tn_course_*), transfers.go (tn_transfer_*). The catalog and transfer
// rules are reference data shared by every workspace (store.go); a tutoring
// session is a conversation of the one conversation model.
package tutor

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/cursor"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/secrets"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// ServerName is the server (and agent) name of the tutor tools.
const ServerName = "tutor"

//go:embed schemas/*.json
var schemas embed.FS

// schema is the input schema of the named tool; a missing one is a
// programming error that registration reports (an empty schema fails the
// registry's checks).
func schema(name string) json.RawMessage {
	b, err := schemas.ReadFile("schemas/" + name + ".json")
	if err != nil {
		return nil
	}
	return b
}

// Server holds the tutor's dependencies.
type Server struct {
	// defaults are the server's values of unset preferences.
	defaults PreferenceDefaults
	st       *store.Store
	conv     *conversation.Store
	log      *slog.Logger
	now      func() time.Time
	dir      *catalog.Directory
	cursor   cursor.Signer

	// courses is the in-memory search index of the catalog, rebuilt when an
	// import changes the catalog (see courseIndex).
	mu      sync.Mutex
	courses *courseIndex
	// rules is the in-memory index of the transfer rules (see ruleIndex).
	rules *ruleSet
	// quotas count the users' prompts (tn_user_quota).
	quotas *quota.Quotas
	// keys seal the users' model credentials (byok.go); nil disables them.
	// reloadKeys reads the keyring again, when a credential was rewrapped
	// under a version this process does not have (nexus keys rotate).
	keys          atomic.Pointer[secrets.Keyring]
	reloadKeys    func() (*secrets.Keyring, error)
	allowLoopback bool
	// askFn runs the chat loop (Options.Ask).
	askFn AskFunc
	// resolve replaces the system resolver for base URLs' hosts (tests).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// AllowLoopbackEnv is the environment variable that sets
// Options.AllowLoopbackModelURLs when set to 1 (internal/app reads it); a
// loopback base URL refused names it, so that whoever runs the server knows
// how to allow a local model.
const AllowLoopbackEnv = "NEXUS_ALLOW_LOOPBACK_MODEL_URLS"

// Options configure a Server.
type Options struct {
	// CursorKey signs pagination cursors (a store secret, so that cursors
	// survive restarts and work on every replica).
	CursorKey []byte
	Logger    *slog.Logger
	// Keyring seals users' model credentials (tn_user_byok_*); without one
	// those tools answer SERVICE_UNAVAILABLE.
	Keyring *secrets.Keyring
	// AllowLoopbackModelURLs lets credentials' base URLs name loopback
	// hosts, over http too (a local Ollama); off by default. Nexus sets it
	// from AllowLoopbackEnv.
	AllowLoopbackModelURLs bool
	// ReloadKeyring reads the keyring again (its file); nil means it
	// cannot change while Nexus runs.
	ReloadKeyring func() (*secrets.Keyring, error)
	// Ask answers a message of tutoring session id with the chat loop,
	// starting the model with tools and the system prompt (tn_session_ask):
	// the answer's text and the events the turn emitted. Nil: no loop, every
	// ask is UNPROCESSABLE_ENTITY.
	Ask AskFunc
	// ToolApproval is the chat's tool approval for users who set none
	// (the configuration's chat.toolApproval), which
	// tn_user_preferences_get reports beside the user's own; empty means
	// never.
	ToolApproval string
}

// AskFunc runs the chat loop for tn_session_ask (see Options.Ask).
type AskFunc func(ctx context.Context, sessionID, message, system string, tools []string) (response string, events []string, err error)

// New returns a tutor server over st; tutoring sessions are conversations
// of conv.
func New(st *store.Store, conv *conversation.Store, o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{st: st, conv: conv, log: log, now: store.Now, dir: catalog.NewDirectory(),
		cursor:        cursor.Signer{Key: o.CursorKey, Label: "nexus/tutor-cursor"},
		allowLoopback: o.AllowLoopbackModelURLs, reloadKeys: o.ReloadKeyring, askFn: o.Ask,
		defaults: PreferenceDefaults{ToolApproval: cmp.Or(o.ToolApproval, "never")}}
	s.keys.Store(o.Keyring)
	// The default limits are valid, so New cannot fail on them.
	s.quotas, _ = quota.New(st, quota.DefaultLimits())
	return s
}

// Register adds the tutor tools to reg.
func (s *Server) Register(reg *registry.Registry) error {
	var defs []registry.Def
	defs = append(defs, s.sessionTools()...)
	defs = append(defs, s.courseTools()...)
	defs = append(defs, s.transferTools()...)
	defs = append(defs, s.userTools()...)
	defs = append(defs, s.byokTools()...)
	if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, defs...); err != nil {
		return err
	}
	// A course's outline as a resource: tn://courses/sfu/CMPT/120 is
	// tn_course_outline of "sfu:CMPT 120".
	return reg.AddLocalTemplate(registry.LocalTemplate{
		Template: &mcp.ResourceTemplate{URITemplate: CourseURITemplate, Name: "course-outline", Title: "Course outline",
			Description: "A BC course's outline as far as it is loaded (tn_course_outline): tn://courses/INSTITUTION/SUBJECT/NUMBER, " +
				"for example tn://courses/sfu/CMPT/120 (institution by its key, as tn_course_institutions lists them).",
			MIMEType: "application/json"},
		Tool: "tn_course_outline",
		Args: func(v map[string]string) (map[string]any, error) {
			if v["institution"] == "" || v["subject"] == "" || v["number"] == "" {
				return nil, fmt.Errorf("a course URI names an institution, a subject and a number: tn://courses/sfu/CMPT/120")
			}
			return map[string]any{"course": v["institution"] + ":" + v["subject"] + " " + v["number"]}, nil
		},
	})
}

// CourseURITemplate is the URI template of a course's outline as a
// resource.
const CourseURITemplate = "tn://courses/{institution}/{subject}/{number}"
