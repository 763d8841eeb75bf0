// Package sandbox confines an agent's process tree with Linux Landlock: a
// policy names the hierarchies the agent may write and those it may read,
// and Exec applies it to the calling thread and replaces the process with
// the agent's command, which (with everything it starts) keeps the
// restriction. Landlock is unprivileged and needs nothing installed; ABI
// reports what the kernel offers (0: nothing, on other systems or old
// kernels), and a launcher refuses or falls back on that.
//
// Landlock only grants: what a policy does not name is out of reach. A
// launcher that wants "everything but the person's key" lists the
// hierarchies around it with ReadRoots.
package sandbox

import "strings"

// MinABI is the oldest Landlock ABI the sandbox accepts: ABI 3 (Linux 6.2)
// is the first that governs truncate(2), without which an agent could
// empty a file it may only read.
const MinABI = 3

// Policy is what an agent's process tree may reach.
type Policy struct {
	// ReadWrite are hierarchies (or single files) the agent may read,
	// write, create in, remove from and execute.
	ReadWrite []string `json:"read_write"`
	// ReadOnly are hierarchies (or single files) it may read and execute.
	ReadOnly []string `json:"read_only"`
	// NoNet cuts TCP (connect and bind), where the kernel can (ABI 4).
	NoNet bool `json:"no_net,omitempty"`
}

// loginSockets name the sockets of a login's own services: its ssh and
// gpg agents (the person's keys), its session bus (whose systemd starts
// programs outside any sandbox) and runtime directory, its display (which
// takes keystrokes for the person's terminals), its container engine.
var loginSockets = map[string]bool{"SSH_AUTH_SOCK": true, "DBUS_SESSION_BUS_ADDRESS": true, "XDG_RUNTIME_DIR": true,
	"DISPLAY": true, "WAYLAND_DISPLAY": true, "XAUTHORITY": true, "GPG_AGENT_INFO": true, "DOCKER_HOST": true}

// WithoutLoginSockets is env without the variables that point a confined
// agent at its login's services. Landlock does not govern connecting to a
// socket, so this keeps an agent from being handed one, not from finding
// one (docs/security.md).
func WithoutLoginSockets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !loginSockets[k] {
			out = append(out, kv)
		}
	}
	return out
}
