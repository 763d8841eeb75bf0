//go:build unix

package store

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// lockWait takes an exclusive flock on path, waiting until ctx is done
// (acquired false, no error). The wait is the kernel's: a waiter wakes the
// moment the holder lets go, with no polling interval left idle between two
// transactions (which bounded how many a second eight writers got through).
func lockWait(ctx context.Context, path string) (release func(), acquired bool, err error) {
	return lockWaitAs(ctx, path, func() string { return "" })
}

// lockWaitAs is lockWait that, once the lock is held, writes who holds it
// (holder's answer, "" for no one named) into the lock file itself, for a waiter
// that gives up (holderOf): one write to a file that exists, where a file
// of its own would be created and removed by every transaction, inside
// the lock.
func lockWaitAs(ctx context.Context, path string, holder func() string) (release func(), acquired bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|noFollow, 0o600)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.OpenFile(path, os.O_RDONLY|noFollow, 0) // a read-only lock file: held, unnamed
	}
	if err != nil {
		return nil, false, err
	}
	fd := int(f.Fd())
	unlock := func() {
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}
	held := func() (func(), bool, error) {
		_, _ = f.WriteAt(holderRecord(holder()), 0) // informational only
		return unlock, true, nil
	}
	err = flockRetry(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return held()
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, err
	}
	done := make(chan error, 1)
	go func() { done <- flockRetry(fd, syscall.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, false, err
		}
		return held()
	case <-ctx.Done():
		// the waiting call cannot be cancelled: should it still get the
		// lock, it lets go at once, so that no writer waits on a process
		// that gave up
		go func() {
			if <-done == nil {
				unlock()
			} else {
				f.Close()
			}
		}()
		return nil, false, nil
	}
}

// holderSize is the size of the record naming the lock's holder: always
// the same, so that each holder's record covers the last one whole.
const holderSize = 256

// holderRecord is holder's record, blank-padded to holderSize.
func holderRecord(holder string) []byte {
	rec := bytes.Repeat([]byte{' '}, holderSize)
	rec[holderSize-1] = '\n'
	copy(rec[:holderSize-1], holder)
	return rec
}

// holderOf names who holds the lock at path ("" when no one is named).
func holderOf(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// flockRetry is flock(2), repeated when a signal interrupts it.
func flockRetry(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
