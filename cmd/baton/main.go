// Command baton coordinates multi-agent coding sessions; see the README.
package main

import (
	"os"

	"baton/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], cmd.ProcessEnv()))
}
