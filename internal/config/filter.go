package config

import (
	"path"
	"strings"
)

// Serves reports whether the server's ToolFilters serve the tool name: a
// filter is an exact name or a path.Match glob ("get_*"), and a leading "!"
// excludes. Without any including filter every tool not excluded is served;
// an exclusion always wins.
func (s *Server) Serves(name string) bool {
	return Selected(s.ToolFilters, name)
}

// Selected applies tool filters to a tool name (see [Server.Serves]).
func Selected(filters []string, name string) bool {
	including, included := false, false
	for _, f := range filters {
		if pattern, exclude := strings.CutPrefix(f, "!"); exclude {
			if matches(pattern, name) {
				return false
			}
			continue
		}
		including = true
		if matches(f, name) {
			included = true
		}
	}
	return !including || included
}

// matches reports whether name is pattern or matches it as a glob; a
// malformed glob matches only itself.
func matches(pattern, name string) bool {
	if pattern == name {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
