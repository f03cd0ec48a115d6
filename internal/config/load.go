package config

// The entry points, Load and Parse, and the loader that walks a file and
// collects its errors; decode.go reads the file, formats.go what it holds.

import (
	"os"
	"path/filepath"
)

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
	for _, v := range cfg.Vaults {
		if !filepath.IsAbs(v.Path) {
			v.Path = filepath.Join(dir, v.Path)
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
	applyNaming(cfg)
	return cfg, nil
}

// Limits that keep a hostile or broken file from costing much.
const (
	maxErrors     = 100     // errors reported before giving up on the rest
	maxNodes      = 1 << 18 // nodes visited, aliases counted each time
	maxMergeDepth = 16      // << merges of merges (a cycle ends here)
)

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
