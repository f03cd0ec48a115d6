package main

import (
	"context"
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
