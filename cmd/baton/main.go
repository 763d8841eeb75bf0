// Command baton coordinates multi-agent coding sessions; see the README.
package main

import (
	"os"

	"github.com/baton-cli/baton/internal/cli"
)

func main() {
	args := os.Args[1:]
	cli.SetProcessGC(args, os.Getenv)    // the collector for this command: cmd/gc.go
	cli.SetProcessProcs(args, os.Getenv) // and its processors
	os.Exit(cli.Main(args, cli.ProcessEnv()))
}
