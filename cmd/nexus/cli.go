package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/store"
)

// placeholders name the value of a flag in help texts.
var placeholders = map[string]string{
	"addr": "HOST:PORT", "allow-hosts": "HOSTS", "allow-origins": "ORIGINS", "config": "FILE", "vault": "DIR",
	"data-dir": "DIR", "db": "URL|PATH", "log-level": "LEVEL", "surface": "NAME", "args": "JSON", "as": "USER", "user": "NAME",
	"oauth-issuer": "URL", "oauth-audience": "URL", "oauth-jwks-url": "URL", "oauth-user-claim": "CLAIM", "oauth-role-claim": "CLAIM",
	"oauth-admin-values": "VALUES", "oauth-tier-claim": "CLAIM", "oauth-tiers": "TIER=VALUE,...",
}

// printFlags prints fs's flags as --flag (the flag package would print
// -flag; both spellings are accepted).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if p, ok := placeholders[f.Name]; ok {
			name = p
		} else if name != "" {
			name = strings.ToUpper(name)
		}
		head := "  --" + f.Name
		if name != "" {
			head += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" {
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n      %s\n", head, usage)
	})
}

// dbScheme matches a URL scheme of two letters or more (one letter is a
// Windows drive, as in C:\nexus.db).
var dbScheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):`)

// checkDB refuses a --db that internal/store would not read as a
// PostgreSQL URL or a SQLite file: a URL of any other scheme (mysql://,
// http://, ...) would otherwise be taken for a file name.
func checkDB(db string) error {
	m := dbScheme.FindStringSubmatch(db)
	if m == nil {
		return nil // empty (the data directory) or a file path
	}
	switch m[1] { // internal/store reads the schemes in lower case only
	case "postgres", "postgresql":
		if !strings.HasPrefix(db, m[1]+"://") {
			break
		}
		return nil
	case "sqlite":
		return nil
	}
	return fmt.Errorf("--db (env NEXUS_DB) %q: not a database Nexus can open; give a PostgreSQL URL (postgres://USER@HOST:PORT/DB or postgresql://...), "+
		"a SQLite file path (/path/to/nexus.db, or sqlite:/path/to/nexus.db), or nothing for nexus.db in the data directory", db)
}

// databaseLocation says where the database is, for the log: the file of a
// SQLite database, or the PostgreSQL URL without its password.
func (c *common) databaseLocation() string {
	db := c.db
	switch {
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
		u, err := url.Parse(db)
		if err != nil {
			scheme, _, _ := strings.Cut(db, "://")
			return scheme + "://(a URL that does not parse)"
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	case db != "":
		return strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
	}
	dir := c.dataDir
	if dir == "" {
		d, err := app.DefaultDataDir()
		if err != nil {
			return "(no data directory: " + err.Error() + ")"
		}
		dir = d
	}
	return filepath.Join(dir, store.FileName)
}

// openServing opens the app for serve and stdio, whose surfaces serve
// transport: it logs where the database is once it is open.
func (c *common) openServing(ctx context.Context, stderr io.Writer, transport string) (*app.App, *slog.Logger, error) {
	c.transport = transport
	a, log, err := c.open(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	log.Info("database open", "dialect", a.Store.Dialect(), "database", c.databaseLocation())
	// The embedding job (with an embedding model): it ends when the app
	// closes.
	a.StartEmbeddings(ctx)
	// Opening compiles every tool's schema: megabytes of short-lived
	// allocations the runtime would keep from the OS for minutes. Return
	// them now, beside the first requests, so that an idle Nexus is small.
	go debug.FreeOSMemory()
	return a, log, nil
}

// closeServing closes the app of serve or stdio and logs the last line.
func closeServing(a *app.App, log *slog.Logger, command string) {
	a.Close()
	log.Info("nexus stopped", "command", command)
}

// openForListing opens the app for tools list, which reads no data: on a
// temporary SQLite store, whatever --db says, so that listing the tools
// neither creates the data directory nor migrates a database. Like every
// command that runs once, it logs at warn unless --log-level or
// NEXUS_LOG_LEVEL says otherwise (the temporary store's migrations are
// nobody's business). The function returned closes the app and removes
// the store.
func (c *common) openForListing(ctx context.Context, stderr io.Writer) (*app.App, func(), error) {
	if err := checkDB(c.db); err != nil {
		return nil, nil, err
	}
	tmp := *c
	dir, err := os.MkdirTemp("", "nexus-tools-")
	if err != nil {
		return nil, nil, err
	}
	tmp.db, tmp.dataDir, tmp.noDemo = "", dir, true
	a, _, err := tmp.open(ctx, stderr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return a, func() { a.Close(); os.RemoveAll(dir) }, nil
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments (the flag package stops at the first
// positional one) and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil // after "--", everything is positional
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// callTarget reads nexus call's positional arguments: the tool, then
// optionally its arguments as JSON in place of --args. It returns
// the tool and the arguments' text ("-" for standard input).
func callTarget(fs *flag.FlagSet, pos []string, argsFlag string, stderr io.Writer) (tool, arguments string, err error) {
	usageError := func(format string, a ...any) (string, string, error) {
		fmt.Fprintf(stderr, "nexus call: "+format+"\n", a...)
		return "", "", exitError{2}
	}
	if len(pos) == 0 {
		return usageError(`give the tool to call: nexus call TOOL ['{"name": "value"}']; "nexus call --help" lists the flags, "nexus tools list" the tools`)
	}
	tool, arguments = pos[0], argsFlag
	if len(pos) == 1 {
		return tool, arguments, nil
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "args" })
	// Any JSON value (or what is meant as JSON) is the pipeline's to
	// judge, as with --args; only other text is taken for a mistake.
	j := strings.TrimSpace(pos[1])
	switch {
	case !json.Valid([]byte(j)) && !strings.HasPrefix(j, "{") && !strings.HasPrefix(j, "[") && j != "-":
		return usageError("unexpected argument %q after the tool name: the arguments are one JSON object, "+
			"e.g. nexus call %s '{\"name\": \"value\"}'; did you mean --args?", pos[1], tool)
	case given:
		return usageError("the arguments are given twice (%q and --args); give them once", pos[1])
	case len(pos) > 2:
		return usageError("unexpected argument %q: the arguments are one JSON object, quoted as one argument; did you mean --args '{...}'?", pos[2])
	}
	return tool, pos[1], nil
}

// callFailed reports whether a call's outcome is an error: the pipeline's,
// or the tool's own (an MCP result with isError, such as a downstream
// tool's or use_tool's).
func callFailed(o *pipeline.Outcome) bool {
	return o.Err != nil || (o.MCP != nil && o.MCP.IsError)
}

// callOutput is what nexus call prints: the outcome's body, indented. An
// error whose body is plain text (an unknown tool, a downstream failure)
// is printed as REST prints every error, {"error": {code, message, ...}}.
func callOutput(o *pipeline.Outcome) []byte {
	body, _ := o.Body()
	var v any
	if !o.IsJSON() && o.Err != nil {
		d := o.Err.Response(o.RequestID)
		d.Field = o.Err.Field
		v = errs.Body{Error: d}
	} else if json.Unmarshal(body, &v) != nil {
		return body
	}
	if pretty, err := json.MarshalIndent(v, "", "  "); err == nil {
		return pretty
	}
	return body
}

// hintUnknownTool tells the user of nexus call what to do about a tool
// the call did not find.
func hintUnknownTool(w io.Writer, a *app.App, tool string, o *pipeline.Outcome) {
	if o.Tool != nil || o.Err == nil || o.Err.Code != errs.NotFound {
		return
	}
	if toolbox, rest, ok := strings.Cut(tool, "__"); ok && a.Workbench != nil {
		server, _, _ := strings.Cut(rest, "__")
		var names []string
		for _, tb := range a.Workbench.Toolboxes() {
			names = append(names, tb.Name)
			if tb.Name != toolbox {
				continue
			}
			if !slices.Contains(tb.Servers, server) {
				fmt.Fprintf(w, "nexus: toolbox %q has no server %q (its servers: %s)\n", toolbox, server, strings.Join(tb.Servers, ", "))
			}
			names = nil
			break
		}
		if names != nil {
			fmt.Fprintf(w, "nexus: no toolbox %q is configured (toolboxes: %s)\n", toolbox, strings.Join(names, ", "))
		}
	}
	fmt.Fprintln(w, `nexus: run "nexus tools list" (with the same --config) to see the tools`)
}

// checkAddr refuses a --addr that is not HOST:PORT with a port number
// 0-65535 (the host may be empty: every interface).
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr (env NEXUS_ADDR): %q is not HOST:PORT, e.g. %s", addr, DefaultAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
		return fmt.Errorf("--addr (env NEXUS_ADDR): %q is not HOST:PORT with a port number 0-65535, e.g. %s", addr, DefaultAddr)
	}
	return nil
}

// checkHosts refuses an --allow-hosts entry that is not a host name or
// address (with a port or not): a URL, a path or a space would never match
// a Host header.
func checkHosts(hosts []string) error {
	for _, h := range hosts {
		if strings.Contains(h, "/") || strings.ContainsFunc(h, unicode.IsSpace) {
			return fmt.Errorf("--allow-hosts (env NEXUS_ALLOW_HOSTS): %q is not a host name: give names such as nexus.example.com, "+
				"comma-separated, without a scheme or path", h)
		}
	}
	return nil
}

// checkOrigins refuses an --allow-origins entry that is not an origin,
// scheme://host[:port] with the scheme http or https: an origin with a
// path, a query or a fragment (a trailing slash is fine) would never match
// an Origin header.
func checkOrigins(origins []string) error {
	for _, o := range origins {
		u, err := url.Parse(o)
		ok := err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) &&
			u.Opaque == "" && u.User == nil && u.Hostname() != "" && (u.Path == "" || u.Path == "/") &&
			u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.Contains(o, "#")
		if ok && u.Port() != "" {
			n, err := strconv.Atoi(u.Port())
			ok = err == nil && n <= 65535
		}
		if !ok {
			return fmt.Errorf("--allow-origins (env NEXUS_ALLOW_ORIGINS): %q is not an origin: give scheme://host[:port] "+
				"with http or https and no path, comma-separated, e.g. https://app.example.com", o)
		}
	}
	return nil
}
