package app

import (
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/vault"
)

// openVaults opens the configuration's vaults (none without one), each
// closed by c. A vault whose folder cannot be opened fails the start: a
// notes server that silently serves nothing would be worse.
func openVaults(conf *config.Config, c *closers) ([]*vault.Vault, error) {
	if conf == nil {
		return nil, nil
	}
	var out []*vault.Vault
	for _, vc := range conf.Vaults {
		v, err := vault.Open(vc.Name, vc.Path, vc.ReadOnly)
		if err != nil {
			return nil, err
		}
		c.add("vault "+vc.Name, v.Close)
		out = append(out, v)
	}
	return out, nil
}
