//go:build !unix

package store

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// lockWait takes an exclusive lock on path, trying again every few
// milliseconds until ctx is done (acquired false, no error).
func lockWait(ctx context.Context, path string) (release func(), acquired bool, err error) {
	fl := flock.New(path)
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && errors.Is(err, ctx.Err()) {
		err = nil
	}
	if !ok {
		return nil, false, err
	}
	return func() { _ = fl.Unlock() }, true, nil
}

const applyLockName = "apply.lock"

// applyLock takes the apply lock exclusive; a patch is applied under it.
func (s *Store) applyLock() (func(), error) {
	fl := flock.New(filepath.Join(s.BatonDir(), applyLockName))
	if err := fl.Lock(); err != nil {
		return nil, err
	}
	return func() { _ = fl.Unlock() }, nil
}

// readLock takes the apply lock shared, for a lock-free reader.
func (s *Store) readLock() (func(), bool) {
	fl := flock.New(filepath.Join(s.BatonDir(), applyLockName))
	if err := fl.RLock(); err != nil {
		return func() {}, false
	}
	return func() { _ = fl.Unlock() }, true
}
