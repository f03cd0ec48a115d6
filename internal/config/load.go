package config

// YAML library: go.yaml.in/yaml/v4.
//
//   - It is the YAML organization's maintained go-yaml (the successor of
//     gopkg.in/yaml.v3, which is unmaintained); its own README says v2 and v3
//     are frozen and get security fixes only, while v4 is the line under active
//     development.
//   - Its Node API keeps mappings in file order with the line and column of
//     every node, which is all Load needs: toolboxes and servers keep their
//     order, and every error points at a line.
//   - Parse errors are structured (*yaml.LoadError with line and column), and
//     the lines are right; yaml.v3 reported some parser errors one line off
//     and dropped the line on the first one.
//   - It reads JSON as YAML 1.2 (including JSON's \/ escape, which yaml.v3
//     rejected), so JSON and YAML files go through one parser and get the same
//     errors with line numbers.
//   - No dependencies of its own; it has built-in depth and alias limits.
//
// github.com/goccy/go-yaml was the alternative: maintained too, with nicer
// error snippets, but its AST has many node types (MappingValueNode,
// TagNode, AnchorNode, ...) that each walker must handle, where yaml's Node
// has five kinds.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

// Defaults applied to servers that do not set them.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 30 * time.Second
)

// DefaultToolbox is the toolbox that holds the servers of a desktop-client
// file ({"mcpServers": {...}}).
const DefaultToolbox = "default"

// Error is one problem found in a configuration file. Parse returns them
// joined with errors.Join; errors.As finds the first.
type Error struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	// Path inside the file, e.g. toolboxes.dev.mcpServers.github.url; empty
	// for errors about the file as a whole.
	Path   string
	Reason string
}

// Error renders FILE:LINE:COL: PATH: REASON (LINE, COL and PATH when known).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Load reads the configuration file at path, expanding ${VAR} from the
// process environment. See Parse.
//
// A relative cwd of a server is taken from the file's directory, so that a
// configuration means the same wherever Nexus is started.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(path, data, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	for _, tb := range cfg.Toolboxes {
		for _, srv := range tb.Servers {
			if srv.Cwd != "" && !filepath.IsAbs(srv.Cwd) {
				srv.Cwd = filepath.Join(dir, srv.Cwd)
			}
		}
	}
	return cfg, nil
}

// Parse reads a configuration from data; path names the file in errors (and
// in the description of a desktop-client file's toolbox). The format is told
// by content: a top-level "toolboxes" is the Nexus format (of which the MCP
// Workbench format is a subset), a top-level "mcpServers" without
// "toolboxes" is the desktop-client format, read as one toolbox named
// "default". JSON is read as YAML.
//
// env looks up the variables of ${VAR} and ${VAR:-default}; nil means no
// variable is set.
//
// On failure the error joins (errors.Join) one *Error per problem found, each
// naming the file, the line, the path inside the file and the reason.
func Parse(path string, data []byte, env func(string) (string, bool)) (*Config, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	file := path
	if file == "" {
		file = "<config>"
	}
	l := &loader{file: file, env: env, budget: maxNodes}

	root, perr := decode(data)
	if perr != nil {
		l.errs = append(l.errs, perr.withFile(file))
		return nil, l.result()
	}
	cfg := &Config{Path: path, Toolboxes: map[string]*Toolbox{}}
	l.top(root, cfg, filepath.Base(file))
	if err := l.result(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Limits that keep a hostile or broken file from costing much.
const (
	maxErrors     = 100     // errors reported before giving up on the rest
	maxNodes      = 1 << 18 // nodes visited, aliases counted each time
	maxMergeDepth = 16      // << merges of merges (a cycle ends here)
)

// decode parses data as one YAML (or JSON) document. A nil node means the
// file holds no document (empty, or only comments).
func decode(data []byte) (root *yaml.Node, perr *Error) {
	// The parser is not ours: whatever it does, Parse returns an error, never
	// a panic.
	defer func() {
		if r := recover(); r != nil {
			root, perr = nil, &Error{Reason: fmt.Sprintf("syntax error: the YAML parser failed (%v)", r)}
		}
	}()
	data = jsonSurrogates(data)
	ld, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		return nil, syntaxError(err)
	}
	var doc yaml.Node
	if err := ld.Load(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	var next yaml.Node
	switch err := ld.Load(&next); {
	case err == io.EOF:
	case err != nil:
		return nil, syntaxError(err)
	default:
		return nil, &Error{Line: next.Line, Reason: "a second YAML document (after ---): a configuration file holds one"}
	}
	n := &doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil, nil
		}
		n = n.Content[0]
	}
	return n, nil
}

func syntaxError(err error) *Error {
	var le *yaml.LoadError
	if errors.As(err, &le) {
		reason := "syntax error: " + le.Message
		if le.ContextMsg != "" && le.ContextMark.Line > 0 && le.ContextMark != le.Mark {
			reason += fmt.Sprintf(" (%s that starts at line %d, column %d)", le.ContextMsg, le.ContextMark.Line, le.ContextMark.Column)
		} else if le.ContextMsg != "" {
			reason += " (" + le.ContextMsg + ")"
		}
		return &Error{Line: le.Mark.Line, Column: le.Mark.Column, Reason: reason}
	}
	return &Error{Reason: "syntax error: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

func (e *Error) withFile(file string) *Error {
	e.File = file
	return e
}

// jsonSurrogates rewrites JSON's UTF-16 surrogate pair escapes
// ("\ud83d\ude00", as Python's json.dumps writes emoji) into YAML's
// "\U0001f600", which the YAML parser reads; it rejects the pairs. Only
// valid JSON is touched: there every backslash is inside a double-quoted
// string.
func jsonSurrogates(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\u`)) && !bytes.Contains(data, []byte(`\U`)) {
		return data
	}
	if !json.Valid(data) {
		return data
	}
	var out []byte
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		if i+12 <= len(data) && data[i+1] == 'u' && data[i+6] == '\\' && data[i+7] == 'u' {
			hi, err1 := strconv.ParseUint(string(data[i+2:i+6]), 16, 32)
			lo, err2 := strconv.ParseUint(string(data[i+8:i+12]), 16, 32)
			if err1 == nil && err2 == nil && hi >= 0xD800 && hi < 0xDC00 && lo >= 0xDC00 && lo < 0xE000 {
				r := (hi-0xD800)<<10 | (lo - 0xDC00) + 0x10000
				out = append(out, data[last:i]...)
				out = fmt.Appendf(out, `\U%08x`, r)
				i += 11
				last = i + 1
				continue
			}
		}
		i++ // skip the escaped character (it may be a backslash)
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// loader walks the node tree, collecting errors.
type loader struct {
	file    string
	env     func(string) (string, bool)
	errs    []error
	seen    map[string]bool // rendered errors, to drop repeats (an alias used twice)
	dropped int
	budget  int
	spent   bool
}

func (l *loader) result() error {
	sort.SliceStable(l.errs, func(i, j int) bool {
		a, b := l.errs[i].(*Error), l.errs[j].(*Error)
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	if l.dropped > 0 {
		l.errs = append(l.errs, &Error{File: l.file, Reason: fmt.Sprintf("%d more errors not shown", l.dropped)})
	}
	return errors.Join(l.errs...)
}

// fail records an error at node n (nil: position unknown) and path.
func (l *loader) fail(n *yaml.Node, p, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		// Past the limit errors are only counted (repeats included), and
		// cheaply: a file of aliases can make a great many.
		l.dropped++
		return
	}
	e := &Error{File: l.file, Path: p, Reason: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	msg := e.Error()
	if l.seen[msg] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[msg] = true
	l.errs = append(l.errs, e)
}

// node follows aliases and charges the visit to the budget; nil once the
// budget is spent (the file expands, through aliases, to too much).
func (l *loader) node(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n == nil || n.Kind == yaml.AliasNode {
		return nil
	}
	l.budget--
	if l.budget < 0 {
		if !l.spent {
			l.spent = true
			l.fail(n, "", "the file expands, through YAML aliases, to more than %d values; stopped reading", maxNodes)
		}
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// scalarText is the text of a scalar read as a string: strings, and numbers
// and booleans as written (port: 8080 gives "8080").
func scalarText(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch n.Tag {
	case "!!str", "!!int", "!!float", "!!bool":
		return n.Value, true
	}
	return "", false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return "a value tagged " + n.Tag
	}
	return "something else"
}

// Paths: keys join with dots; a key that is not plain letters, digits, '_',
// '-' or '$' is quoted in brackets: mcpServers["my.server"].
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

func join(p, key string) string {
	if !plainKey.MatchString(key) {
		return p + "[" + strconv.Quote(key) + "]"
	}
	if p == "" {
		return key
	}
	return p + "." + key
}

func index(p string, i int) string { return fmt.Sprintf("%s[%d]", p, i) }

// field is one key of a mapping.
type field struct {
	name     string
	key, val *yaml.Node
}

// mapping returns the keys of mapping n in file order, with YAML merge keys
// (<<) applied; ok is false (and an error recorded) when n is not a mapping.
func (l *loader) mapping(n *yaml.Node, p, want string) ([]field, bool) {
	return l.mappingDepth(n, p, want, 0)
}

func (l *loader) mappingDepth(n *yaml.Node, p, want string, depth int) ([]field, bool) {
	n = l.node(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		l.fail(n, p, "must be %s, not %s", want, kindName(n))
		return nil, false
	}
	var fields, merged []field
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := l.node(n.Content[i]), n.Content[i+1]
		if k == nil {
			return nil, false
		}
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, l.merge(v, p, depth)...)
			continue
		}
		name, ok := scalarText(k)
		if !ok {
			l.fail(k, p, "keys must be strings, not %s", kindName(k))
			continue
		}
		if first, dup := seen[name]; dup {
			l.fail(k, join(p, name), "duplicate key %q (first at line %d, column %d)", name, first.Line, first.Column)
			continue
		}
		seen[name] = k
		fields = append(fields, field{name, k, v})
	}
	// Keys given in the mapping itself win over merged ones; among merged
	// mappings the first wins.
	for _, f := range merged {
		if _, dup := seen[f.name]; !dup {
			seen[f.name] = f.key
			fields = append(fields, f)
		}
	}
	return fields, true
}

// merge returns the fields a merge key (<<: *anchor or <<: [*a, *b]) brings.
func (l *loader) merge(v *yaml.Node, p string, depth int) []field {
	v = l.node(v)
	if v == nil {
		return nil
	}
	if depth >= maxMergeDepth {
		l.fail(v, p, "merge keys (<<) nested more than %d deep (do they merge each other?)", maxMergeDepth)
		return nil
	}
	var sources []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{v}
	case yaml.SequenceNode:
		sources = v.Content
	default:
		l.fail(v, p, "a merge key (<<) must be given a mapping or a list of mappings, not %s", kindName(v))
		return nil
	}
	var out []field
	for _, s := range sources {
		fs, _ := l.mappingDepth(s, p, "a mapping to merge (<<)", depth+1)
		out = append(out, fs...)
	}
	return out
}

// unknownKey reports a key the format does not have, suggesting the closest
// known one.
func (l *loader) unknownKey(f field, p string, known []string, note string) {
	kp := join(p, f.name)
	if s := suggest(f.name, known); s != "" {
		l.fail(f.key, kp, "unknown key %q (did you mean %q?)", f.name, s)
		return
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	l.fail(f.key, kp, "unknown key %q (known keys: %s%s)", f.name, strings.Join(sorted, ", "), note)
}

// suggest returns the known key closest to name: the same but for case, or
// within an edit distance of 2 and of a third of name's length.
func suggest(name string, known []string) string {
	best, bestD := "", min(2, max(1, len(name)/3))+1
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Names of toolboxes and servers.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// BuiltinToolbox is the name of Nexus's own toolbox (its local servers),
// reserved: a configured toolbox cannot take it. It equals
// registry.BuiltinToolbox.
const BuiltinToolbox = "nexus"

// checkName checks a toolbox or server name. Together with the registry's
// rules for tool names, the rules make every flat name toolbox__server__tool
// name exactly one tool: a name holds no "__" and neither starts nor ends
// with "_", so the first "__" of a flat name ends the toolbox and the next
// one the server.
func (l *loader) checkName(f field, p, what string) bool {
	switch {
	case strings.Contains(f.name, "__"):
		l.fail(f.key, p, "%s name %q contains \"__\": Nexus names flat tools toolbox__server__tool, so \"__\" inside a toolbox or server name would make tool names ambiguous", what, f.name)
		return false
	case !nameRE.MatchString(f.name):
		l.fail(f.key, p, "%s name %q is not valid: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit", what, f.name)
		return false
	case strings.HasSuffix(f.name, "_"):
		l.fail(f.key, p, "%s name %q ends with \"_\": Nexus names flat tools toolbox__server__tool, and a name ending with \"_\" would make tool names ambiguous "+
			"(server \"b_\" with tool \"c\" and server \"b\" with tool \"_c\" would both be a__b___c)", what, f.name)
		return false
	case what == "toolbox" && f.name == BuiltinToolbox:
		l.fail(f.key, p, "toolbox name %q is reserved: it is the built-in toolbox of Nexus's own servers (substrate, vkb); choose another name", f.name)
		return false
	}
	return true
}

// Top level.

var (
	nexusTopKeys   = []string{"toolboxes", "$schema"}
	desktopTopKeys = []string{"mcpServers", "$schema", "globalShortcut", "preferences"}
	toolboxKeys    = []string{"description", "mcpServers"}
	serverKeys     = []string{
		"command", "args", "env", "cwd",
		"url", "headers", "transport", "type",
		"toolFilters", "eager", "timeout", "connectTimeout",
		"disabled", "alwaysAllow", "autoApprove", "description",
	}
)

const formatsHint = "give toolboxes (the Nexus or MCP Workbench format) or mcpServers (the desktop-client format)"

func (l *loader) top(root *yaml.Node, cfg *Config, base string) {
	if root == nil || isNull(root) {
		l.fail(nil, "", "the file is empty: %s", formatsHint)
		return
	}
	fields, ok := l.mapping(root, "", "a mapping with toolboxes or mcpServers")
	if !ok {
		return
	}
	var toolboxes, servers *field
	for i := range fields {
		switch fields[i].name {
		case "toolboxes":
			toolboxes = &fields[i]
		case "mcpServers":
			servers = &fields[i]
		}
	}
	switch {
	case toolboxes != nil:
		for _, f := range fields {
			switch {
			case f.name == "toolboxes", f.name == "$schema", strings.HasPrefix(f.name, "x-"):
			case f.name == "mcpServers":
				l.fail(f.key, "mcpServers", "a file with toolboxes lists its servers under each toolbox (toolboxes.NAME.mcpServers), not at the top")
			default:
				l.unknownKey(f, "", nexusTopKeys, "; keys starting with x- are ignored")
			}
		}
		l.toolboxes(*toolboxes, cfg)
	case servers != nil:
		for _, f := range fields {
			switch f.name {
			case "mcpServers", "$schema", "globalShortcut", "preferences":
			default:
				l.unknownKey(f, "", desktopTopKeys, "")
			}
		}
		tb := &Toolbox{Name: DefaultToolbox, Description: "Servers from " + base, Servers: map[string]*Server{}}
		l.servers(*servers, "mcpServers", tb)
		cfg.Toolboxes[tb.Name] = tb
		cfg.Order = append(cfg.Order, tb.Name)
	default:
		for _, f := range fields {
			if f.name != "$schema" && !strings.HasPrefix(f.name, "x-") {
				l.unknownKey(f, "", []string{"toolboxes", "mcpServers"}, "")
			}
		}
		l.fail(root, "", "no toolboxes or mcpServers: %s", formatsHint)
	}
}

func (l *loader) toolboxes(f field, cfg *Config) {
	fields, ok := l.mapping(f.val, "toolboxes", "a mapping of toolbox names to toolboxes")
	if !ok {
		return
	}
	for _, tf := range fields {
		p := join("toolboxes", tf.name)
		okName := l.checkName(tf, p, "toolbox")
		tb := l.toolbox(tf, p)
		if tb != nil && okName {
			cfg.Toolboxes[tb.Name] = tb
			cfg.Order = append(cfg.Order, tb.Name)
		}
	}
}

func (l *loader) toolbox(f field, p string) *Toolbox {
	fields, ok := l.mapping(f.val, p, "a toolbox (a mapping with description and mcpServers)")
	if !ok {
		return nil
	}
	tb := &Toolbox{Name: f.name, Servers: map[string]*Server{}}
	var servers *field
	for i, sf := range fields {
		switch sf.name {
		case "description":
			tb.Description, _ = l.str(sf, join(p, sf.name))
		case "mcpServers":
			servers = &fields[i]
		default:
			l.unknownKey(sf, p, toolboxKeys, "")
		}
	}
	if servers == nil || isNull(l.node(servers.val)) {
		at := l.node(f.val)
		if servers != nil {
			at = servers.key
		}
		l.fail(at, join(p, "mcpServers"), "missing: a toolbox lists its servers under mcpServers (an empty mapping {} is allowed)")
		return tb
	}
	l.servers(*servers, join(p, "mcpServers"), tb)
	return tb
}

func (l *loader) servers(f field, p string, tb *Toolbox) {
	fields, ok := l.mapping(f.val, p, "a mapping of server names to servers")
	if !ok {
		return
	}
	for _, sf := range fields {
		if s := l.server(sf, join(p, sf.name)); s != nil {
			tb.Servers[s.Name] = s
			tb.Order = append(tb.Order, s.Name)
		}
	}
}

// server reads one server; nil when it is disabled or invalid.
func (l *loader) server(f field, p string) *Server {
	fields, ok := l.mapping(f.val, p, "a server (a mapping with command or url)")
	if !ok {
		return nil
	}
	by := map[string]field{}
	for _, sf := range fields {
		by[sf.name] = sf
	}
	// A disabled server is skipped before anything else is checked, as
	// desktop clients do: its variables need not be set.
	if df, ok := by["disabled"]; ok {
		if disabled, ok := l.boolean(df, join(p, "disabled")); ok && disabled {
			return nil
		}
	}
	valid := l.checkName(f, p, "server")
	nerr := len(l.errs) + l.dropped

	s := &Server{Name: f.name, Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
	// command and url count as given when present and not null, even if
	// their value has an error (reported on its own).
	var command, rawURL, transport, typ *string
	var commandF, urlF, transportF, typF field
	hasCommand, hasURL := l.given(by, "command"), l.given(by, "url")
	for _, sf := range fields {
		fp := join(p, sf.name)
		switch sf.name {
		case "command":
			if v, ok := l.str(sf, fp); ok {
				command, commandF = &v, sf
			}
		case "url":
			if v, ok := l.str(sf, fp); ok {
				rawURL, urlF = &v, sf
			}
		case "transport":
			if v, ok := l.str(sf, fp); ok {
				transport, transportF = &v, sf
			}
		case "type":
			if v, ok := l.str(sf, fp); ok {
				typ, typF = &v, sf
			}
		case "args":
			s.Args = l.strList(sf, fp, checkNoNUL)
		case "env":
			s.Env = l.strMap(sf, fp, "environment variable", checkEnvName, checkNoNUL)
		case "cwd":
			if v, ok := l.str(sf, fp); ok {
				if v == "" {
					l.fail(l.node(sf.val), fp, "is empty")
				} else if strings.ContainsRune(v, 0) {
					l.fail(l.node(sf.val), fp, "contains a NUL byte")
				}
				s.Cwd = v
			}
		case "headers":
			s.Headers = l.strMap(sf, fp, "header", checkHeaderName, checkHeaderValue)
		case "toolFilters":
			s.ToolFilters = l.strList(sf, fp, checkFilter)
		case "eager":
			s.Eager, _ = l.boolean(sf, fp)
		case "timeout":
			if d, ok := l.duration(sf, fp); ok {
				s.Timeout = d
			}
		case "connectTimeout":
			if d, ok := l.duration(sf, fp); ok {
				s.ConnectTimeout = d
			}
		case "disabled", "alwaysAllow", "autoApprove", "description":
			// disabled was read above; the others are desktop-client
			// settings that Nexus ignores.
		default:
			l.unknownKey(sf, p, serverKeys, "")
		}
	}

	// The transport.
	want := ""
	conflict := false
	if transport != nil && typ != nil {
		t1, ok1 := transportOf(*transport)
		t2, ok2 := transportOf(*typ)
		if ok1 && ok2 && t1 != t2 {
			l.fail(l.node(typF.val), join(p, "type"), "says %q but transport says %q: give one", *typ, *transport)
			conflict = true
		}
	}
	for _, t := range []struct {
		v *string
		f field
	}{{transport, transportF}, {typ, typF}} {
		if t.v == nil {
			continue
		}
		kind, ok := transportOf(*t.v)
		if !ok {
			l.fail(l.node(t.f.val), join(p, t.f.name), "unknown transport %q: use stdio, http (or streamable-http, streamableHttp) or sse", *t.v)
			continue
		}
		if want == "" && !conflict {
			want = kind
		}
	}
	switch {
	case hasCommand && hasURL:
		l.fail(l.node(f.val), p, "give either command or url, not both")
	case !hasCommand && !hasURL:
		l.fail(l.node(f.val), p, "give command (to start a stdio server) or url (to reach an HTTP server)")
	case hasCommand:
		s.Transport = Stdio
		if command != nil {
			s.Command = *command
			if *command == "" {
				l.fail(l.node(commandF.val), join(p, "command"), "is empty")
			} else if strings.ContainsRune(*command, 0) {
				l.fail(l.node(commandF.val), join(p, "command"), "contains a NUL byte")
			}
		}
		if want != "" && want != Stdio {
			l.fail(l.node(f.val), p, "transport %s needs a url, and this server gives a command", want)
		}
		if _, ok := by["headers"]; ok && s.Headers != nil {
			l.fail(by["headers"].key, join(p, "headers"), "headers are for HTTP servers (url), and this server gives a command")
		}
	default:
		s.Transport = StreamableHTTP
		if want == SSE {
			s.Transport = SSE
		}
		if want == Stdio {
			l.fail(l.node(f.val), p, "transport stdio needs a command, and this server gives a url")
		}
		if rawURL != nil {
			s.URL = *rawURL
			if reason := checkURL(*rawURL); reason != "" {
				l.fail(l.node(urlF.val), join(p, "url"), "%s", reason)
			}
		}
		for _, k := range []string{"args", "env", "cwd"} {
			if kf, ok := by[k]; ok && !isNull(l.nodeOrNull(kf.val)) {
				l.fail(kf.key, join(p, k), "%s is for stdio servers (command), and this server gives a url", k)
			}
		}
	}
	if !valid || len(l.errs)+l.dropped != nerr {
		return nil
	}
	return s
}

// given reports whether key k is present in by with a value other than null.
func (l *loader) given(by map[string]field, k string) bool {
	f, ok := by[k]
	if !ok {
		return false
	}
	n := l.node(f.val)
	return n != nil && !isNull(n)
}

// nodeOrNull is node, with a null scalar for a spent budget.
func (l *loader) nodeOrNull(n *yaml.Node) *yaml.Node {
	if m := l.node(n); m != nil {
		return m
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
}

func transportOf(v string) (string, bool) {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(v)) {
	case "stdio":
		return Stdio, true
	case "http", "streamablehttp":
		return StreamableHTTP, true
	case "sse":
		return SSE, true
	}
	return "", false
}

// checkURL returns why u is not usable, or "". It never repeats the URL: it
// may carry a secret from the environment.
func checkURL(u string) string {
	if u == "" {
		return "is empty"
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return "is not a valid URL"
	}
	if s := strings.ToLower(parsed.Scheme); s != "http" && s != "https" {
		return "must be an absolute http:// or https:// URL"
	}
	if parsed.Host == "" {
		return "has no host"
	}
	return ""
}

// Values.

// str reads a string value (numbers and booleans as written), expanding
// ${VAR}. ok is false when the value is null (absent) or invalid.
func (l *loader) str(f field, p string) (string, bool) {
	n := l.node(f.val)
	if n == nil || isNull(n) {
		return "", false
	}
	text, ok := scalarText(n)
	if !ok {
		l.fail(n, p, "must be a string, not %s", kindName(n))
		return "", false
	}
	return l.expand(n, p, text)
}

func (l *loader) expand(n *yaml.Node, p, text string) (string, bool) {
	v, missing, err := Expand(text, l.env)
	if err != nil {
		l.fail(n, p, "%v", err)
		return "", false
	}
	for _, name := range missing {
		l.fail(n, p, "environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
	}
	return v, len(missing) == 0
}

func (l *loader) boolean(f field, p string) (bool, bool) {
	n := l.node(f.val)
	if n == nil || isNull(n) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.fail(n, p, "must be true or false, not %s", kindName(n))
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	if err != nil {
		l.fail(n, p, "must be true or false")
		return false, false
	}
	return b, true
}

func (l *loader) duration(f field, p string) (time.Duration, bool) {
	v, ok := l.str(f, p)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		l.fail(l.node(f.val), p, "%q is not a duration: give a number with a unit, like \"30s\" or \"2m\"", v)
		return 0, false
	}
	if d <= 0 {
		l.fail(l.node(f.val), p, "must be more than 0 (%q)", v)
		return 0, false
	}
	return d, true
}

// strList reads a list of strings; nil when null.
func (l *loader) strList(f field, p string, check func(string) string) []string {
	n := l.node(f.val)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.fail(n, p, "must be a list of strings, not %s", kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		ip := index(p, i)
		c = l.node(c)
		if c == nil {
			return out
		}
		text, ok := scalarText(c)
		if !ok {
			l.fail(c, ip, "must be a string, not %s", kindName(c))
			continue
		}
		v, ok := l.expand(c, ip, text)
		if !ok {
			continue
		}
		if reason := check(v); reason != "" {
			l.fail(c, ip, "%s", reason)
			continue
		}
		out = append(out, v)
	}
	return out
}

// strMap reads a mapping of names to strings (env, headers); keys are not
// expanded. nil when null.
func (l *loader) strMap(f field, p, what string, checkKey, checkValue func(string) string) map[string]string {
	fields, ok := l.mapping(f.val, p, "a mapping of "+what+" names to strings")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(fields))
	for _, kf := range fields {
		kp := join(p, kf.name)
		if reason := checkKey(kf.name); reason != "" {
			l.fail(kf.key, kp, "%s", reason)
			continue
		}
		v, ok := l.str(kf, kp)
		if !ok {
			if n := l.node(kf.val); n != nil && isNull(n) {
				l.fail(n, kp, "must be a string, not null")
			}
			continue
		}
		if reason := checkValue(v); reason != "" {
			l.fail(l.node(kf.val), kp, "%s", reason)
			continue
		}
		out[kf.name] = v
	}
	return out
}

// The checks below return why a value is not usable, or "". None repeats
// the value: it may come from the environment and be a secret.

func checkNoNUL(v string) string {
	if strings.ContainsRune(v, 0) {
		return "contains a NUL byte"
	}
	return ""
}

func checkEnvName(k string) string {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return fmt.Sprintf("%q is not a valid environment variable name", k)
	}
	return ""
}

func checkHeaderName(k string) string {
	if k == "" {
		return "a header name is empty"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c > 0x7e || c <= ' ' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return fmt.Sprintf("%q is not a valid HTTP header name", k)
		}
	}
	return ""
}

func checkHeaderValue(v string) string {
	if strings.ContainsAny(v, "\r\n\x00") {
		return "an HTTP header value cannot contain a line break or NUL byte"
	}
	return ""
}

func checkFilter(v string) string {
	pat := strings.TrimPrefix(v, "!")
	if pat == "" {
		return "a tool filter is empty: give a tool name or glob (get_*), or !name to exclude"
	}
	if _, err := path.Match(pat, ""); err != nil {
		return fmt.Sprintf("tool filter %q is not a valid glob", v)
	}
	return ""
}

// Expand expands ${NAME} and ${NAME:-default} in s from env, and turns $$
// into a literal $. A $ before anything else is kept as it is. NAME is
// letters, digits and '_', not starting with a digit. The default is used
// when NAME is unset (a variable set to "" is set); it may itself hold
// ${...} and $$, and runs to the matching '}'. missing lists, in order and
// once each, the variables that were needed but unset and had no default;
// err is a syntax error.
func Expand(s string, env func(string) (string, bool)) (out string, missing []string, err error) {
	e := &expander{s: s, env: env}
	out, err = e.run(false, true)
	return out, e.missing, err
}

type expander struct {
	s       string
	i       int
	env     func(string) (string, bool)
	missing []string
}

// run expands up to the end of s or, in a default (inDefault), up to the
// '}' that closes it, which it leaves unread. With eval false it only checks
// the syntax: a default that is not used looks nothing up.
func (e *expander) run(inDefault, eval bool) (string, error) {
	var b strings.Builder
	for e.i < len(e.s) {
		c := e.s[e.i]
		switch {
		case c == '}' && inDefault:
			return b.String(), nil
		case c != '$':
			b.WriteByte(c)
			e.i++
		case strings.HasPrefix(e.s[e.i:], "$$"):
			b.WriteByte('$')
			e.i += 2
		case strings.HasPrefix(e.s[e.i:], "${"):
			if err := e.variable(&b, eval); err != nil {
				return "", err
			}
		default:
			b.WriteByte('$')
			e.i++
		}
	}
	if inDefault {
		return "", errors.New("a ${ is not closed with }: write $$ for a literal $")
	}
	return b.String(), nil
}

func (e *expander) variable(b *strings.Builder, eval bool) error {
	e.i += 2 // ${
	start := e.i
	for e.i < len(e.s) && (e.s[e.i] == '_' || isAlnum(e.s[e.i])) {
		e.i++
	}
	name := e.s[start:e.i]
	if e.i >= len(e.s) {
		return errors.New("a ${ is not closed with }: write $$ for a literal $")
	}
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return fmt.Errorf("%s: a variable name is letters, digits and '_', not starting with a digit (write $$ for a literal $)", e.shown(start))
	}
	var val string
	set := false
	if eval {
		val, set = e.env(name)
	}
	switch {
	case e.s[e.i] == '}':
		e.i++
		if eval && !set {
			if !slices.Contains(e.missing, name) {
				e.missing = append(e.missing, name)
			}
		}
		b.WriteString(val)
	case strings.HasPrefix(e.s[e.i:], ":-"):
		e.i += 2
		def, err := e.run(true, eval && !set)
		if err != nil {
			return err
		}
		e.i++ // }
		if set {
			b.WriteString(val)
		} else {
			b.WriteString(def)
		}
	default:
		return fmt.Errorf("%s is not supported: write ${%s} or ${%s:-default}", e.shown(start), name, name)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// shown quotes the ${...} that starts at start-2, for an error: up to its
// closing '}', or its first 20 bytes.
func (e *expander) shown(start int) string {
	rest := e.s[start-2:]
	if i := strings.IndexByte(rest, '}'); i >= 0 && i < 40 {
		return strconv.Quote(rest[:i+1])
	}
	if len(rest) > 20 {
		rest = strings.ToValidUTF8(rest[:20], "") + "..."
	}
	return strconv.Quote(rest)
}
