package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nexus-mcp/nexus/internal/app"
)

// reloadOnHangup reloads the configuration file on each SIGHUP until ctx
// ends, and tells the other replicas to reload theirs
// (app.TopicConfigChanged). A file that does not load is refused with an
// error in the log, and the configuration in use stays.
func reloadOnHangup(ctx context.Context, a *app.App, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		log.Info("SIGHUP: reloading the configuration")
		if _, err := a.ReloadConfig(ctx, true); err != nil {
			log.Error("configuration not reloaded", "err", err)
		}
	}
}

const reloadSynopsis = `nexus reload [--db URL] (env NEXUS_EVENTS for NATS)`

// cmdReload tells every replica sharing the database (or the NATS server
// of NEXUS_EVENTS) to read its configuration file again, as SIGHUP to one
// of them does, for deployments where sending a signal is awkward. It
// publishes app.TopicConfigChanged and returns; each replica logs its
// reload or why it refused the file.
func cmdReload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reload", reloadSynopsis, stdout, stderr)
	var c common
	c.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "nexus reload: no arguments wanted, %d given\nUsage: %s\n", len(pos), reloadSynopsis)
		return exitError{2}
	}
	a, err := c.openAdmin(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.Events.Engine() == "local" {
		return errors.New("nexus reload tells replicas over PostgreSQL (--db postgres://...) or NATS (NEXUS_EVENTS) events; " +
			"a Nexus on SQLite has no other process to tell: send SIGHUP to its nexus serve process")
	}
	if err := a.Events.Publish(ctx, app.TopicConfigChanged, map[string]string{"by": "nexus reload"}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "told the replicas over %s to read their configuration file again; each logs the outcome\n", a.Events.Engine())
	return nil
}
