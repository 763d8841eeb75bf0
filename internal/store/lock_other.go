//go:build !unix

package store

import (
	"context"
	"errors"
	"os"
	"strings"
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

// lockWaitAs is lockWait that names who holds the lock (holder's answer,
// "" for no one) in a file beside it while it is held: here the lock file itself may
// be locked against writes.
func lockWaitAs(ctx context.Context, path string, holder func() string) (release func(), acquired bool, err error) {
	release, ok, err := lockWait(ctx, path)
	who := ""
	if ok {
		who = holder()
	}
	if who == "" {
		return release, ok, err
	}
	_ = os.WriteFile(path+".holder", []byte(who+"\n"), 0o644) // informational only
	return func() {
		os.Remove(path + ".holder") // so a later wait never names a holder that has gone
		release()
	}, true, nil
}

// holderOf names who holds the lock at path ("" when no one is named).
func holderOf(path string) string {
	b, _ := os.ReadFile(path + ".holder")
	return strings.TrimSpace(string(b))
}
