package config

import (
	"regexp"
	"strings"
)

// Vault is a folder of Markdown notes served by the vault agents (the Nexus
// format's vaults section: issue 28).
type Vault struct {
	// Name is the vault's name: its key in the section.
	Name string
	// Path is the folder; relative to the configuration file's folder
	// when read by Load.
	Path string
	// ReadOnly refuses every write to the vault, on every surface.
	ReadOnly bool
	// Description says what the vault holds.
	Description string
}

var vaultKeys = []string{"path", "readOnly", "description"}

// vaultName is what a vault's name may be: a name a tool call can give
// (and the seed's legacy agentName_<vaultSuffix> can carry).
var vaultName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// vaults reads the vaults section: a mapping of names to {path,
// readOnly?, description?}, in file order.
func (l *loader) vaults(f field, cfg *Config) {
	fields, ok := l.mapping(f.val, "vaults", "a mapping of vault names to {path, readOnly, description}")
	if !ok {
		return
	}
	seen := map[string]string{}
	for _, vf := range fields {
		p := join("vaults", vf.name)
		if !vaultName.MatchString(vf.name) {
			l.fail(vf.key, p, "%q is not a vault name: 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit", vf.name)
			continue
		}
		if prev, dup := seen[strings.ToLower(vf.name)]; dup {
			l.fail(vf.key, p, "%q is the vault %q again: vault names are told apart without regard to case", vf.name, prev)
			continue
		}
		seen[strings.ToLower(vf.name)] = vf.name
		props, ok := l.mapping(vf.val, p, "a mapping with path, readOnly and description")
		if !ok {
			continue
		}
		v := &Vault{Name: vf.name}
		for _, sf := range props {
			sp := join(p, sf.name)
			switch sf.name {
			case "path":
				v.Path, _ = l.str(sf, sp)
			case "readOnly":
				v.ReadOnly, _ = l.boolean(sf, sp)
			case "description":
				v.Description, _ = l.str(sf, sp)
			default:
				l.unknownKey(sf, p, vaultKeys, "")
			}
		}
		if strings.TrimSpace(v.Path) == "" {
			l.fail(vf.key, p, "a vault needs a path: the folder of its notes")
			continue
		}
		cfg.Vaults = append(cfg.Vaults, v)
	}
}
