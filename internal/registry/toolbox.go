package registry

import "context"

// Toolbox is a configured toolbox of downstream servers.
type Toolbox struct {
	Name, Description string
	// Servers are the names of its servers, in configuration order.
	Servers []string
	// ServerDescriptions are its servers' descriptions, by name, where
	// the configuration gives one.
	ServerDescriptions map[string]string
}

// Opened reports the result of opening a toolbox.
type Opened struct {
	Toolbox, Description string
	// ServersConnected are the servers connected now, in configuration order.
	ServersConnected []string
	// ServerErrors says, per server, why it is not connected, or which of
	// its tools are not served (names that break the MCP name rules).
	// Never nil.
	ServerErrors map[string]string
	// Tools are the toolbox's tools in the registry, by server in
	// configuration order, then in the order the server lists them.
	Tools []*Tool
}

// Toolboxes are the configured toolboxes and the way to open them (the
// workbench provides them; the surfaces use them).
type Toolboxes interface {
	// Toolboxes returns the configured toolboxes, in configuration order.
	Toolboxes() []Toolbox
	// Open connects a toolbox's servers and registers their tools; it is
	// idempotent. An unknown toolbox is a NOT_FOUND error (and no Opened);
	// a toolbox none of whose servers connects is an error beside its
	// Opened.
	Open(ctx context.Context, name string) (*Opened, error)
	// OpenAll opens every toolbox.
	OpenAll(ctx context.Context)
}

// Listings are implemented by [Toolboxes] that keep each server's last
// listing, so that tool search covers a toolbox before it is opened
// (issue 27).
type Listings interface {
	// Listed returns the tools of the configured servers whose tools are
	// not in the registry, as each server last listed them (without
	// handlers: they are for search, and called once their toolbox is
	// opened).
	Listed() []Tool
	// ListingsVersion changes whenever Listed may have (cheap: a search
	// asks it every time).
	ListingsVersion() uint64
	// Unlisted names the configured toolboxes with a server whose tools
	// are known neither from the registry nor from a kept listing.
	Unlisted() []string
}
