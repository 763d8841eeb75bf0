// Command baton coordinates multi-agent coding sessions; see the README.
package main

import (
	"os"

	"github.com/baton-cli/baton/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.ProcessEnv()))
}
