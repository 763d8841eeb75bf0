//go:build unix

package store

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
	f, err := OpenFile(path, os.O_CREATE|os.O_RDWR|noFollow, 0o600)
	if errors.Is(err, fs.ErrPermission) {
		f, err = OpenFile(path, os.O_RDONLY|noFollow, 0) // a read-only lock file: held, unnamed
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

// applyLockName is the lock that orders in-place patches against
// lock-free readers: a patch is applied under it exclusive, and a reader
// holds it shared while it reads a file's bytes.
const applyLockName = "apply.lock"

// applyLock takes the apply lock exclusive; a patch is applied under it.
func (s *Store) applyLock() (func(), error) {
	f, err := OpenFile(filepath.Join(s.BatonDir(), applyLockName), os.O_CREATE|os.O_RDWR|noFollow, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flockRetry(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// readLock takes the apply lock shared, for a lock-free reader reading a
// file's bytes (no patch is applied meanwhile). ok is false when it cannot
// be taken (a state directory this user may not write, without the lock
// file): the reader then checks the file's identity around its read.
func (s *Store) readLock() (release func(), ok bool) {
	fd, err := openFd(filepath.Join(s.BatonDir(), applyLockName), syscall.O_CREAT|syscall.O_RDONLY|noFollow)
	if err != nil {
		return func() {}, false
	}
	if err := flockRetry(fd, syscall.LOCK_SH); err != nil {
		syscall.Close(fd)
		return func() {}, false
	}
	return func() { syscall.Close(fd) }, true
}

// replaceCache replaces path, a cache that readers write without the
// transaction lock, with data: written into the spare beside it and
// exchanged with it, so that no file is created once the spare exists (a
// file creation costs a reader a millisecond of CPU on ext4) and no reader
// of path sees it half-written. One writer at a time holds the spare (an
// flock); a writer that finds it held, or finds that the file it locked is
// no longer the spare (another writer exchanged it meanwhile), leaves the
// cache as it is: best effort.
func replaceCache(spare, path string, data []byte) error {
	f, err := openOverwrite(spare)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(spare, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another reader is writing it
	}
	held, err := f.Stat()
	now, lerr := os.Lstat(spare)
	if err != nil || lerr != nil || !os.SameFile(held, now) {
		return nil
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return err
	}
	return swapIn(spare, path)
}
