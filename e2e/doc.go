// Package e2e tests the real baton binary as separate operating-system
// processes: many writers racing for the state lock at once, and writers
// killed with SIGKILL at random moments of their transaction. TestMain builds
// the binary once; every test runs it through os/exec, never in-process, so
// the lock, the redo journal and the atomic renames are exercised exactly as
// agents exercise them.
//
// The package holds only tests. Knobs:
//
//	BATON_CRASH_ITERATIONS  kill/recover iterations of TestCrashSafety (default 300)
package e2e
