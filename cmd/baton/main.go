// Command baton coordinates multi-agent coding sessions; see the README.
package main

import (
	"os"
	"runtime/debug"

	"github.com/baton-cli/baton/cmd"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A short-lived process whose heap is mostly the state files it
		// just read: collecting before it exits only costs time.
		debug.SetGCPercent(400)
	}
	os.Exit(cmd.Main(os.Args[1:], cmd.ProcessEnv()))
}
