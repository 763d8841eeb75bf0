// Command baton coordinates multi-agent coding sessions; see the README.
package main

import (
	"os"

	"github.com/baton-cli/baton/cmd"
)

func main() {
	args := os.Args[1:]
	cmd.SetProcessGC(args, os.Getenv)    // the collector for this command: cmd/gc.go
	cmd.SetProcessProcs(args, os.Getenv) // and its processors
	os.Exit(cmd.Main(args, cmd.ProcessEnv()))
}
