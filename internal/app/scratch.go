package app

import (
	"os"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
)

// A --file outside any project (its directory holds no .baton/: a temp
// file a test or a script made) is nobody's record. Reading it is only
// reading, as with the predecessor's scripts. A write there would have no
// lock, no audit log and no role to answer to, so only a person makes it
// (who is recorded in a log of that directory's own); anyone else is
// refused before anything, a .baton/ included, is written there.

// scratchWrite refuses a write to such a file by a caller who is not a
// person.
func (a *App) scratchWrite(s *store.Store, fileName string) error {
	if a.g.File == "" || fileName == "" || a.g.StateDir != "" || a.caller.As != "" {
		return nil
	}
	if _, err := os.Lstat(s.BatonDir()); err == nil {
		return nil
	}
	return errs.New(errs.Policy, "--file %s: %s holds no baton project (no baton state directory beside the file), so a write there would change no project's record and is not made; nothing was written. Reads of the file work; a session writes its project's own state files", s.Path(fileName), s.Dir)
}
