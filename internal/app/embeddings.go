package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/store"
)

// openVectors returns the index of the server's embedding model: emb (from
// NEXUS_EMBEDDINGS_*), else the configuration file's embeddings section,
// else none (nil: searches stay lexical).
func openVectors(st *store.Store, emb embed.Embedder, conf *config.Config, log *slog.Logger) (*embed.Index, error) {
	if emb == nil && conf != nil && conf.Embeddings != nil {
		e := conf.Embeddings
		var err error
		emb, err = embed.New(embed.Settings{Provider: e.Provider, BaseURL: e.BaseURL, APIKey: e.APIKey, Model: e.Model, Dims: e.Dims, Batch: e.Batch})
		if err != nil {
			return nil, fmt.Errorf("%s: embeddings: %w", conf.Path, err)
		}
	}
	if emb == nil {
		return nil, nil
	}
	log.Info("embedding model: hybrid search", "model", emb.Model())
	return embed.NewIndex(st, emb, embed.Options{Logger: log}), nil
}

// StartEmbeddings starts the embedding job (embed.Index.Run) when an
// embedding model is configured: it embeds the beliefs and exchanges that
// have no vector, now and as they are written, until ctx ends or the App
// closes, which waits for it. serve and stdio start it; one-off commands do
// not.
func (a *App) StartEmbeddings(ctx context.Context) {
	if a.Vectors == nil || a.embedStop != nil {
		return
	}
	ctx, a.embedStop = context.WithCancel(ctx)
	a.embedDone = make(chan struct{})
	go func() {
		defer close(a.embedDone)
		a.Vectors.Run(ctx)
	}()
}

// stopEmbeddings ends the embedding job and waits for it.
func (a *App) stopEmbeddings() {
	if a.embedStop == nil {
		return
	}
	a.embedStop()
	<-a.embedDone
	a.embedStop = nil
}
