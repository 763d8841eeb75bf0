//go:build !unix

package store

import (
	"context"
	"errors"
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
