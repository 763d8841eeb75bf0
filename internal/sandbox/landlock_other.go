//go:build !linux

package sandbox

import "errors"

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

// Exec fails: there is no sandbox on this system.
func Exec(Policy, []string, []string) error {
	return errors.New("sandbox: Landlock is only available on Linux")
}
