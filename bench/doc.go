// Package bench holds baton's performance measurement; it has no code of its
// own. `make bench` runs all four parts:
//
//   - Go benchmarks beside the code they measure, in *_bench_test.go files
//     (progress, reviews, features, jsondoc, store): parsing, appending to and
//     encoding a state of 10,000 sessions, and committing a multi-megabyte
//     file through the store's journal;
//   - bench/cmdbench, which times whole baton processes on a small and a
//     large generated state and reports the ratios the performance targets
//     are stated in: against a Go hello-world (the floor), --field reads
//     against --version and first contact against trusted, the writes on 10
//     to 50,000 sessions, throughput for 1 to 16 concurrent writers, and,
//     given a checkout, the predecessor's Python scripts doing the same;
//   - bench/gitbench, which generates a ~1,000- and a ~100,000-commit
//     repository with git fast-import and times each git operation baton
//     runs (open, range, ancestry, merge base, merge) against the git command
//     doing the same, in process and as processes, and the commands that run
//     them (session end and reviews add-review under 150 ms on the large one);
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
