// Package bench holds baton's performance measurement; it has no code of its
// own. `make bench` runs all four parts:
//
//   - Go benchmarks beside the code they measure, in *_bench_test.go files
//     (jsondoc, progress, reviews, features, store, app, cli, gitops):
//     parsing, appending to and encoding a state of 10,000 sessions,
//     committing it through the store's journal, and whole commands in
//     process;
//   - bench/cmdbench, which times whole baton processes on a small and a
//     large generated state and reports the ratios the performance targets
//     are stated in: against a Go hello-world (the floor) and --version, the
//     writes on 10 to 5,000 sessions, throughput for 1 to 16 concurrent
//     writers, init adopting a predecessor's state, and, given a checkout,
//     the predecessor's Python scripts doing the same reads and add-session;
//   - bench/gitbench, which generates a ~1,000- and a ~100,000-commit
//     repository with git fast-import and times each git operation baton
//     runs (open, range, ancestry, merge base, merge) against the git command
//     doing the same, in process and as processes, and the commands that run
//     them;
//   - bench/lanebench, which drives a generated project of 16 independent
//     features to DONE with a scripted agent of fixed session time and a
//     gate of fixed time, for 1, 2, 4 and 8 agents at once: wall time, the
//     speed-up against one agent, the time landings wait in the queue and
//     the share of lane time idle.
//
// bench/stat holds what the harnesses share.
//
// bench/gen generates those states — 10,000 sessions, 2,000 reviews with
// issues, 1,000 features by default — through the domain packages, so the
// files are exactly what baton writes.
//
// The machine is usually shared: compare ratios within one run, and repeat.
package bench
