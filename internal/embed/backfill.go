package embed

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Progress is where the background job stands for one kind of row.
type Progress struct {
	Kind, Model string
	// Embedded is how many rows this sweep embedded; Pending how many were
	// without a vector of the model when it started, less those.
	Embedded, Pending int
	// LastError is the last failure ("" after a step that succeeded).
	LastError string
	Updated   time.Time
}

// Progress is the background job's progress, one entry per source.
func (ix *Index) Progress() []Progress {
	ix.progMu.Lock()
	defer ix.progMu.Unlock()
	out := make([]Progress, 0, len(ix.o.Sources))
	for _, s := range ix.o.Sources {
		if p, ok := ix.progress[s.Kind]; ok {
			out = append(out, p)
		}
	}
	return out
}

func (ix *Index) setProgress(p Progress) {
	p.Model, p.Updated = ix.emb.Model(), time.Now()
	ix.progMu.Lock()
	ix.progress[p.Kind] = p
	ix.progMu.Unlock()
}

// Run is the background job: it embeds the rows of every source that have
// no vector of the model (new rows, rows from before the model was
// configured, rows embedded by another model), a batch at a time, now and
// whenever Notify or Options.Interval says, until ctx ends; every
// Options.FullEvery it sweeps all rows again and deletes the vectors of
// deleted rows. Progress is logged per batch and kept ([Index.Progress]). A
// failure (the provider is down) is logged and tried again at the next
// interval; the job resumes where the store says it is, so a restart loses
// nothing. Replicas sharing a PostgreSQL database take turns (a lock per
// pass). The caller starts it in a goroutine and waits for it after
// canceling ctx.
func (ix *Index) Run(ctx context.Context) {
	tick := time.NewTicker(ix.o.Interval)
	defer tick.Stop()
	marks := map[string]string{}
	lastFull := time.Time{}
	for {
		full := time.Since(lastFull) >= ix.o.FullEvery
		if full {
			clear(marks)
			lastFull = time.Now()
		}
		err := ix.st.Exclusive(ctx, "embeddings-backfill", func(ctx context.Context) error {
			return ix.pass(ctx, marks, full)
		})
		if err != nil && ctx.Err() == nil {
			ix.log.Warn("embedding backfill: will try again", "model", ix.emb.Model(), "in", ix.o.Interval, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ix.notify:
		case <-tick.C:
		}
	}
}

// Backfill embeds, now, every row of every source that has no vector of the
// model, and deletes the vectors of deleted rows: one full sweep of [Run],
// for tests and the CLI.
func (ix *Index) Backfill(ctx context.Context) error {
	return ix.pass(ctx, map[string]string{}, true)
}

// pass embeds the rows without a vector of each source, from its mark on
// (ids above it); full also prunes and reports the pending count.
func (ix *Index) pass(ctx context.Context, marks map[string]string, full bool) error {
	var errsSeen []error
	for _, src := range ix.o.Sources {
		if err := ix.passSource(ctx, src, marks, full); err != nil {
			errsSeen = append(errsSeen, fmt.Errorf("%s: %w", src.Kind, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errsSeen...)
}

func (ix *Index) passSource(ctx context.Context, src Source, marks map[string]string, full bool) error {
	p := Progress{Kind: src.Kind}
	if full {
		if n, err := ix.prune(ctx, src); err != nil {
			return err
		} else if n > 0 {
			ix.log.Info("deleted the vectors of deleted rows", "kind", src.Kind, "count", n)
			ix.forget()
		}
		var err error
		if p.Pending, err = ix.countMissing(ctx, src); err != nil {
			return err
		}
		if p.Pending > 0 {
			ix.log.Info("embedding backfill: start", "kind", src.Kind, "model", ix.emb.Model(), "pending", p.Pending)
		}
		ix.setProgress(p)
	} else if prev, ok := ix.progressOf(src.Kind); ok {
		p = prev
	}
	for {
		docs, err := ix.missing(ctx, src, marks[src.Kind])
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			if full && p.Embedded > 0 {
				ix.log.Info("embedding backfill: done", "kind", src.Kind, "model", ix.emb.Model(), "embedded", p.Embedded)
			}
			return nil
		}
		if err := ix.Put(ctx, docs); err != nil {
			if KindOf(err) != BadRequest {
				p.LastError = err.Error()
				ix.setProgress(p)
				return err
			}
			// The provider refused one of the texts: embed them one at a
			// time and skip those it refuses, so one row never blocks the
			// others (the next full sweep tries them again).
			for _, d := range docs {
				if err := ix.Put(ctx, []Doc{d}); err != nil {
					if KindOf(err) != BadRequest {
						p.LastError = err.Error()
						ix.setProgress(p)
						return err
					}
					ix.log.Warn("embedding backfill: the provider refused a text, skipped", "kind", d.Kind, "id", d.ID, "err", err)
				}
			}
		}
		marks[src.Kind] = docs[len(docs)-1].ID
		p.Embedded += len(docs)
		p.Pending = max(0, p.Pending-len(docs))
		p.LastError = ""
		ix.setProgress(p)
		ix.log.Info("embedding backfill", "kind", src.Kind, "model", ix.emb.Model(), "embedded", p.Embedded, "pending", p.Pending)
	}
}

func (ix *Index) progressOf(kind string) (Progress, bool) {
	ix.progMu.Lock()
	defer ix.progMu.Unlock()
	p, ok := ix.progress[kind]
	return p, ok
}

// missingWhere selects the rows of src (alias t) without a vector of the
// model; its arguments are the kind and the model.
const missingWhere = `NOT EXISTS (SELECT 1 FROM embeddings v WHERE v.kind = ? AND v.id = t.id AND v.model = ?)`

// missing reads the next batch of rows of src after mark that have no
// vector of the model, in id order.
func (ix *Index) missing(ctx context.Context, src Source, mark string) ([]Doc, error) {
	rows, err := ix.st.DB().QueryContext(ctx, ix.st.Q(`SELECT t.id, t.workspace, `+src.Text+` FROM `+src.Table+` t
		WHERE t.id > ? AND `+missingWhere+` ORDER BY t.id LIMIT ?`), mark, src.Kind, ix.emb.Model(), ix.o.Batch)
	if err != nil {
		return nil, fmt.Errorf("rows without vectors: %w", err)
	}
	defer rows.Close()
	var out []Doc
	for rows.Next() {
		d := Doc{Kind: src.Kind}
		if err := rows.Scan(&d.ID, &d.Workspace, &d.Text); err != nil {
			return nil, fmt.Errorf("rows without vectors: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rows without vectors: %w", err)
	}
	return out, nil
}

func (ix *Index) countMissing(ctx context.Context, src Source) (int, error) {
	var n int
	err := ix.st.DB().QueryRowContext(ctx, ix.st.Q(`SELECT COUNT(*) FROM `+src.Table+` t WHERE `+missingWhere),
		src.Kind, ix.emb.Model()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count rows without vectors: %w", err)
	}
	return n, nil
}

// prune deletes the vectors of src's rows that no longer exist.
func (ix *Index) prune(ctx context.Context, src Source) (int64, error) {
	res, err := ix.st.DB().ExecContext(ctx, ix.st.Q(`DELETE FROM embeddings WHERE kind = ? AND NOT EXISTS
		(SELECT 1 FROM `+src.Table+` t WHERE t.id = embeddings.id)`), src.Kind)
	if err != nil {
		return 0, fmt.Errorf("delete vectors of deleted rows: %w", err)
	}
	return res.RowsAffected()
}

// Status is how many rows of one kind have a vector of the model.
type Status struct {
	Kind, Model     string
	Rows, Embedded  int
	OtherModels     int // vectors of other models, replaced as the job goes
	Pending         int // Rows - Embedded
	CachedWorkspace int // workspaces whose vectors this process holds
}

// Status counts, in the store, the rows of each source with and without a
// vector of the model: what `nexus embeddings status` prints.
func (ix *Index) Status(ctx context.Context) ([]Status, error) {
	var out []Status
	for _, src := range ix.o.Sources {
		s := Status{Kind: src.Kind, Model: ix.emb.Model()}
		if err := ix.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+src.Table).Scan(&s.Rows); err != nil {
			return nil, fmt.Errorf("embedding status: %w", err)
		}
		if err := ix.st.DB().QueryRowContext(ctx, ix.st.Q(`SELECT
			COALESCE(SUM(CASE WHEN model = ? THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN model <> ? THEN 1 ELSE 0 END), 0)
			FROM embeddings WHERE kind = ?`), s.Model, s.Model, src.Kind).Scan(&s.Embedded, &s.OtherModels); err != nil {
			return nil, fmt.Errorf("embedding status: %w", err)
		}
		s.Pending = max(0, s.Rows-s.Embedded)
		ix.mu.Lock()
		for k := range ix.cache {
			if k.kind == src.Kind {
				s.CachedWorkspace++
			}
		}
		ix.mu.Unlock()
		out = append(out, s)
	}
	return out, nil
}
