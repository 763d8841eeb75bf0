package store

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// datasync makes f's content durable, with what reading it needs (its
// size, its blocks), but not its times: fdatasync, which writes no inode
// when the size is unchanged.
func datasync(f *os.File) error { return syncCall(f, syscall.SYS_FDATASYNC, "fdatasync") }

// syncFile makes f durable: fsync.
func syncFile(f *os.File) error {
	if !rawSyncs.Load() {
		return f.Sync()
	}
	return syncCall(f, syscall.SYS_FSYNC, "fsync")
}

// syncCall makes the sync system call nr on f. A one-shot write, which
// runs its Go code on one processor (cmd.SetProcessProcs, which calls
// RawSyncs), keeps it while the disk works: it has nothing else to run
// meanwhile, and a call that let the runtime take the processor back
// (syscall.Syscall) had it handed to a thread woken to look for work — one
// per sync, four per write — and kept the runtime's monitor polling every
// 20 µs for the whole write. Any other process (one that serves agents or
// runs sessions, whatever its processors) makes an ordinary call, which
// lets its other goroutines run during the sync.
func syncCall(f *os.File, nr uintptr, op string) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	one := rawSyncs.Load()
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			if one {
				_, _, errno = syscall.RawSyscall(nr, fd, 0, 0)
			} else {
				_, _, errno = syscall.Syscall(nr, fd, 0, 0)
			}
			if errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if errno != 0 {
		return &os.PathError{Op: op, Path: f.Name(), Err: errno}
	}
	return nil
}

// startWriteback starts writing f's dirty pages out, without waiting for
// them: the fsync after it, or another file's, then finds them on their
// way (a hint: an error is the fsync's to report).
func startWriteback(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	})
}
