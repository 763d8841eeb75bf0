package store

import "sync/atomic"

// rawSyncs is set by RawSyncs (see syncCall).
var rawSyncs atomic.Bool

// RawSyncs makes this process's file syncs keep its processor through the
// system call: for a one-shot write that runs its Go code on one processor
// and has nothing else to run while the disk works. A process that serves
// agents or runs sessions never calls it (its other goroutines must run
// during a sync). Where syncs are not system calls of their own it does
// nothing.
func RawSyncs() { rawSyncs.Store(true) }
