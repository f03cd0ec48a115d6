package config

// Walking the YAML node tree: aliases, the node budget, scalars, mappings
// and merge keys.

import "go.yaml.in/yaml/v4"

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

// isNull reports whether n is a null scalar.
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

// kindName names what n is, for an error: "a mapping", "a string", ...
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

// mappingDepth is mapping, depth merge keys (<<) deep.
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
