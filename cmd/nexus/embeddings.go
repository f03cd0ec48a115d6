package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nexus-mcp/nexus/internal/app"
)

const embeddingsSynopsis = `nexus embeddings status|backfill [common flags]`

// cmdEmbeddings shows hybrid search's vectors (status: per kind of row, how
// many have a vector of the configured embedding model) or embeds, now,
// every belief and exchange that has none (backfill; serve and stdio do it
// in the background). The embedding model comes from --config's embeddings
// section or NEXUS_EMBEDDINGS_*.
func cmdEmbeddings(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "status" && args[0] != "backfill" && !isHelp(args[0])) {
		fmt.Fprintf(stderr, "Usage: %s\n", embeddingsSynopsis)
		return exitError{2}
	}
	sub, name, rest := subcommand("embeddings", args)
	fs := newFlagSet(name, embeddingsSynopsis, stdout, stderr)
	var c common
	c.register(fs)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "%s: no arguments wanted, %d given\nUsage: %s\n", name, len(pos), embeddingsSynopsis)
		return exitError{2}
	}
	if err := checkDB(c.db); err != nil {
		return err
	}
	c.noDemo = true
	a, _, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.Vectors == nil {
		return errors.New(name + ": no embedding model: give --config with an embeddings section, or set NEXUS_EMBEDDINGS_PROVIDER and NEXUS_EMBEDDINGS_MODEL")
	}
	if sub == "backfill" {
		if err := a.Vectors.Backfill(ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return printEmbeddingStatus(ctx, a, stdout)
}

func printEmbeddingStatus(ctx context.Context, a *app.App, stdout io.Writer) error {
	st, err := a.Vectors.Status(ctx)
	if err != nil {
		return err
	}
	for _, s := range st {
		line := fmt.Sprintf("%-9s %d of %d embedded by %s, %d pending", s.Kind+"s", s.Embedded, s.Rows, s.Model, s.Pending)
		if s.OtherModels > 0 {
			line += fmt.Sprintf(" (%d vectors of other models, replaced as the job goes)", s.OtherModels)
		}
		fmt.Fprintln(stdout, line)
	}
	return nil
}
