//go:build !linux || !(amd64 || arm64)

package lineage

import (
	"context"
	"errors"
	"os"
	"syscall"
)

var errUnavailable = errors.New("lineage: telling the agent's own calls apart needs seccomp's user notifications (Linux on amd64 or arm64)")

// Available says why this system cannot supervise an agent's execs.
func Available() error { return errUnavailable }

// Pair fails: there is nothing to hand over.
func Pair() (launcher, helper *os.File, err error) { return nil, nil, errUnavailable }

// Install fails, and closes sock.
func Install(sock *os.File) error {
	sock.Close()
	return errUnavailable
}

// Supervise fails, and closes sock.
func Supervise(_ context.Context, sock *os.File, _ int) (*Tree, error) {
	sock.Close()
	return nil, errUnavailable
}

// Tree is never made on this system.
type Tree struct{}

// Classify answers Outside: nothing is supervised.
func (*Tree) Classify(int) Verdict { return Verdict{Kind: Outside, Reason: errUnavailable.Error()} }

// ClassifyConn answers Outside: nothing is supervised.
func (t *Tree) ClassifyConn(syscall.Conn) Verdict { return t.Classify(0) }

// Stats is empty.
func (*Tree) Stats() Stats { return Stats{} }

// Close does nothing.
func (*Tree) Close() error { return nil }
