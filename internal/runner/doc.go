// Package runner lets a lane of baton run work on another machine over
// plain SSH and git. A runner is an SSH destination with a slot count
// (the "runners" of .baton/config). For a remote lane the launcher pushes
// the lane's branch and its base to a clone on the runner, forwards the
// session's broker socket there (ssh -R of a unix socket), runs the agent
// confined to that clone by the runner's own baton, and fetches the
// branch back. The state, the lock, the log and the key stay with the
// launcher: the runner holds the clone and the forwarded socket, nothing
// else of the person's.
//
// The package has three parts: the configuration and the placement of a
// new lane (pure), the launcher's side (the ssh and git commands it runs),
// and the runner's side (the hidden commands the launcher's ssh runs
// there: probe, prepare, exec, clean).
package runner
