package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nexus-mcp/nexus/internal/tutor"
)

const keysSynopsis = `nexus keys rotate [common flags]`

// rewrapBatch is how many credentials one transaction of a rotation
// rewraps.
const rewrapBatch = 500

// cmdKeys rotates the keyring that seals users' model credentials: a new
// key-encryption key becomes current and is saved (atomically) before any
// credential moves to it, then every credential's data key is rewrapped
// under it, in batches, each in a transaction. Old versions stay in the
// keyring, so a rotation stopped half way leaves every credential readable,
// and running it again finishes the work.
func cmdKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "rotate" && !isHelp(args[0])) {
		fmt.Fprintf(stderr, "Usage: %s\n", keysSynopsis)
		return exitError{2}
	}
	_, name, rest := subcommand("keys", args)
	fs := newFlagSet(name, keysSynopsis, stdout, stderr)
	var c common
	c.register(fs)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "nexus keys rotate: no arguments wanted, %d given\nUsage: %s\n", len(pos), keysSynopsis)
		return exitError{2}
	}
	a, err := c.openAdmin(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	switch {
	case a.Keyring == nil:
		return errors.New("nexus keys rotate: there is no keyring: give --data-dir (keyring.json lives there) or set NEXUS_KEYRING")
	case a.KeyringPath == "":
		return errors.New("nexus keys rotate: the keyring comes from NEXUS_KEYRING, which this command cannot rewrite; " +
			"rotate a keyring file (nexus keys rotate --data-dir DIR with that keyring as DIR/keyring.json) and give every replica its new contents")
	}
	start := time.Now()
	version := a.Keyring.Rotate()
	if err := a.Keyring.Save(a.KeyringPath); err != nil {
		return fmt.Errorf("save the rotated keyring: %w", err)
	}
	// Replicas read the keyring again now, not when they first meet a
	// credential sealed under the new version.
	if err := a.KeysRotated(ctx, version); err != nil {
		fmt.Fprintf(stderr, "nexus keys rotate: %v (they read it when they first meet a credential sealed under version %d)\n", err, version)
	}
	n, err := tutor.RewrapCredentials(ctx, a.Store, a.Keyring, rewrapBatch)
	if err != nil {
		return fmt.Errorf("rewrapped %d credentials, then: %w (the keyring keeps every version: run nexus keys rotate again)", n, err)
	}
	fmt.Fprintf(stdout, "keyring %s: version %d is current; rewrapped %d credentials in %s\n",
		a.KeyringPath, version, n, time.Since(start).Round(time.Millisecond))
	return nil
}
