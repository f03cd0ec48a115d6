package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
)

// retentionFlag registers --trace-retention (env NEXUS_TRACE_RETENTION)
// and returns the function that reads it once the flags are parsed: the
// retention, 0 to keep traces forever, or an error naming the flag and its
// variable.
func retentionFlag(fs *flag.FlagSet) func() (time.Duration, error) {
	s := fs.String("trace-retention", envOr("NEXUS_TRACE_RETENTION", "30d"),
		"how long call traces are kept: days (30d), a duration (720h) or 0 to keep them all (env NEXUS_TRACE_RETENTION)")
	return func() (time.Duration, error) {
		d, err := app.ParseRetention(*s)
		if err != nil {
			return 0, fmt.Errorf("--trace-retention (env NEXUS_TRACE_RETENTION): %w", err)
		}
		return d, nil
	}
}

// cmdMaintenance runs maintenance once: it deletes traces older than the
// retention. "nexus serve" does the same every hour.
func cmdMaintenance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("maintenance", "nexus maintenance [--trace-retention 30d] [common flags]", stdout, stderr)
	var c common
	c.register(fs)
	retention := retentionFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	keep, err := retention()
	if err != nil {
		return err
	}
	if err := checkDB(c.db); err != nil {
		return err
	}
	c.noDemo = true // maintenance never loads demo data
	a, _, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := a.Maintain(ctx, keep)
	if err != nil {
		return err
	}
	if keep <= 0 {
		fmt.Fprintln(stdout, "traces are kept forever (--trace-retention 0); nothing deleted")
		return nil
	}
	fmt.Fprintf(stdout, "deleted %d traces older than %s\n", n, app.FormatRetention(keep))
	return nil
}
