package app

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/vault"
)

// openVaults opens the configuration's vaults and the folder extra (nexus
// --vault, named after the folder; "" for none), each closed by c. A vault
// whose folder cannot be opened fails the start: a notes server that
// silently serves nothing would be worse.
func openVaults(conf *config.Config, extra string, c *closers) ([]*vault.Vault, error) {
	var list []*config.Vault
	if conf != nil {
		list = append(list, conf.Vaults...)
	}
	if extra != "" {
		abs, err := filepath.Abs(extra)
		if err != nil {
			return nil, fmt.Errorf("--vault %s: %w", extra, err)
		}
		name := vaultNameOf(abs)
		for _, v := range list {
			if strings.EqualFold(v.Name, name) {
				return nil, fmt.Errorf("--vault %s: the configuration already has a vault named %q", extra, v.Name)
			}
		}
		list = append(list, &config.Vault{Name: name, Path: abs})
	}
	var out []*vault.Vault
	for _, vc := range list {
		v, err := vault.Open(vc.Name, vc.Path, vc.ReadOnly)
		if err != nil {
			return nil, err
		}
		c.add("vault "+vc.Name, v.Close)
		out = append(out, v)
	}
	return out, nil
}

// vaultNameOf names a vault after its folder: its base name, with what a
// vault name cannot hold turned into "-" ("My Notes" is "My-Notes").
func vaultNameOf(dir string) string {
	var b strings.Builder
	for _, r := range filepath.Base(dir) {
		switch {
		case r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-._")
	if name == "" {
		return "notes"
	}
	return name[:min(len(name), 64)]
}
