package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// A change of several files in one step: moving a note rewrites the links
// to it in other notes, and the move and the rewrites must all happen or
// none. Each file's change is atomic on its own (a rename); together they
// are made so by a journal. Before anything changes, the whole plan (each
// rename, each rewrite with the content before and after) is written to
// .nexus/journal.json, atomically; then the steps run; then the journal is
// removed. A vault opened with a journal in it was interrupted (the process
// was killed, the machine stopped): the steps that ran are undone, in
// reverse, and the vault is as it was before the change.

const journalPath = ".nexus/journal.json"

// plan is a change of several files.
type plan struct {
	Renames []rename  `json:"renames"`
	Writes  []rewrite `json:"writes"` // after the renames, at the files' new paths
}

type rename struct{ From, To string }

type rewrite struct {
	Path     string `json:"path"`
	Old, New []byte // the content before and after
}

// apply runs p: renames then rewrites, under the journal. A rewrite of a
// file that changed since it was planned (its content is not Old) is a
// CONFLICT, and what ran is undone. Called with mu held.
func (v *Vault) apply(p plan) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("vault: journal: %w", err)
	}
	if err := v.mkdirs(path.Dir(journalPath)); err != nil {
		return err
	}
	tmp, err := v.writeTemp(journalPath, b)
	if err != nil {
		return err
	}
	if err := v.root.Rename(tmp, journalPath); err != nil {
		v.root.Remove(tmp)
		return v.fsError(journalPath, err)
	}
	v.syncDir(path.Dir(journalPath))
	step := 0
	v.crashPoint(&step)
	fail := func(err error) error {
		if uerr := v.undo(p); uerr != nil {
			return fmt.Errorf("%w (and undoing the steps that ran failed: %v; the journal %s is kept and the next start will finish undoing them)", err, uerr, journalPath)
		}
		v.root.Remove(journalPath)
		return err
	}
	for _, r := range p.Renames {
		if err := v.mkdirs(path.Dir(r.To)); err != nil {
			return fail(err)
		}
		if err := v.root.Rename(r.From, r.To); err != nil {
			return fail(v.fsError(r.From, err))
		}
		v.syncDir(path.Dir(r.From))
		v.syncDir(path.Dir(r.To))
		v.crashPoint(&step)
	}
	for _, w := range p.Writes {
		if err := v.replace(w.Path, w.New, Hash(w.Old)); err != nil {
			return fail(err)
		}
		v.crashPoint(&step)
	}
	if err := v.root.Remove(journalPath); err != nil {
		return v.fsError(journalPath, err)
	}
	v.syncDir(path.Dir(journalPath))
	return nil
}

// crashPoint calls the test hook after each step of a plan.
func (v *Vault) crashPoint(step *int) {
	*step++
	if v.crash != nil {
		v.crash(*step)
	}
}

// undo reverses what of p ran: a rewritten file whose content is p's new
// content gets its old content back, a renamed file whose new path exists
// and old path does not goes back. Each step is checked, so undoing a plan
// that ran in part, or twice, is safe.
func (v *Vault) undo(p plan) error {
	var failed []error
	for i := len(p.Writes) - 1; i >= 0; i-- {
		w := p.Writes[i]
		now, err := v.root.ReadFile(w.Path)
		if err != nil || Hash(now) != Hash(w.New) {
			continue // not written (or changed by someone since: theirs)
		}
		if err := v.replace(w.Path, w.Old, Hash(w.New)); err != nil {
			failed = append(failed, err)
		}
	}
	for i := len(p.Renames) - 1; i >= 0; i-- {
		r := p.Renames[i]
		if _, err := v.root.Lstat(r.To); err != nil {
			continue // not renamed
		}
		if _, err := v.root.Lstat(r.From); err == nil {
			continue // something is at the old path again: leave both
		}
		if err := v.mkdirs(path.Dir(r.From)); err != nil {
			failed = append(failed, err)
			continue
		}
		if err := v.root.Rename(r.To, r.From); err != nil {
			failed = append(failed, v.fsError(r.To, err))
		}
	}
	return errors.Join(failed...)
}

// recover undoes a plan that was interrupted, if the vault holds one.
func (v *Vault) recover() error {
	b, err := v.root.ReadFile(journalPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return v.fsError(journalPath, err)
	}
	var p plan
	if err := json.Unmarshal(b, &p); err != nil {
		return errs.E(errs.Internal, "the journal %s cannot be read (%v): move it away to open the vault", journalPath, err)
	}
	if err := v.undo(p); err != nil {
		return err
	}
	if err := v.root.Remove(journalPath); err != nil {
		return v.fsError(journalPath, err)
	}
	return nil
}
