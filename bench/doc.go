// Package bench holds baton's performance measurement; it has no code of its
// own. `make bench` runs both halves:
//
//   - Go benchmarks beside the code they measure, in *_bench_test.go files
//     (progress, reviews, features, jsondoc, store): parsing, appending to and
//     encoding a state of 10,000 sessions, and committing a multi-megabyte
//     file through the store's journal;
//   - bench/cmdbench, which times whole baton processes on a small and a
//     large generated state and reports the ratios the performance targets
//     are stated in: a --field read costs at most 3× `baton --version` and
//     about the same on 10 sessions as on 10,000; `progress add-session` on
//     the large state stays under 50 ms.
//
// bench/gen generates those states — 10,000 sessions, 2,000 reviews with
// issues, 1,000 features by default — through the domain packages, so the
// files are exactly what baton writes.
//
// The machine is usually shared: compare ratios within one run, and repeat.
package bench
