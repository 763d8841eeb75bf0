package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/bench/stat"
)

// The adoption table (-init): 'baton init' adopting a predecessor's state
// of each size in -init-sizes, a fresh copy for every run, each size once
// in every round, the rounds' sizes in a shuffled order. The target: a
// predecessor's 50,000 sessions adopted in under 30 s.
const adoptBudget = 30 * time.Second

// adoptSize is the generated predecessor state of n sessions: a review for
// every fifth session and a fix for every tenth, on 1,000 features.
func adoptSize(n int) gen.Size {
	return gen.Size{Sessions: n, Reviews: n / 5, Fixes: n / 10, Features: 1000}
}

// parseSizes reads a comma-separated list of session counts.
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-init-sizes: %q is not a session count (e.g. 3000,12000,50000)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchAdopt times init's adoption at each size and prints the table.
func benchAdopt(w io.Writer, r *runner, o options) error {
	sizes, err := parseSizes(o.initSizes)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp(o.dir, "baton-cmdbench-init-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(w, "\n(h) baton init adopting a predecessor's state (each a fresh git repository; %d timed runs of each size)\n", o.initRuns)
	states := map[int]*gen.State{}
	for _, n := range sizes {
		if states[n], err = gen.Generate(adoptSize(n), o.seed); err != nil {
			return err
		}
	}
	res := map[int][]sample{}
	for round := 0; round < o.initRuns; round++ {
		order := slices.Clone(sizes)
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, n := range order {
			s, err := r.adoptOnce(filepath.Join(root, fmt.Sprintf("r%d-%d", round, n)), states[n])
			if err != nil {
				return err
			}
			res[n] = append(res[n], s)
		}
	}
	fmt.Fprintf(w, "%-58s %10s %10s %12s\n", "state", "wall (s)", "cpu (s)", "ms/session")
	for _, n := range sizes {
		wall, cpu := medians(res[n])
		fmt.Fprintf(w, "%-58s %10.2f %10.2f %12.3f\n", adoptSize(n), wall.Seconds(), cpu.Seconds(), float64(wall.Milliseconds())/float64(n))
	}
	if n := slices.Max(sizes); n >= 50000 {
		wall, _ := medians(res[n])
		fmt.Fprintf(w, "target: %d sessions adopted in under %s: %s\n", n, adoptBudget, stat.Verdict(wall < adoptBudget))
	}
	return nil
}

// adoptOnce writes st into a new repository at dir and times 'baton init'
// there.
func (r *runner) adoptOnce(dir string, st *gen.State) (sample, error) {
	if err := st.WriteDir(dir); err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(dir)
	if _, err := gitInit(dir); err != nil {
		return sample{}, err
	}
	s, _, err := r.exec(&state{name: fmt.Sprint(st.Size.Sessions, " sessions"), dir: dir}, append(slices.Clip(r.env), "BATON_STATE_DIR="+dir, "XDG_STATE_HOME="+dir+".state"), []string{"init"})
	os.RemoveAll(dir + ".state")
	return s, err
}

// medians are the median wall and CPU times of the samples.
func medians(ss []sample) (wall, cpu time.Duration) {
	walls := make([]time.Duration, len(ss))
	cpus := make([]time.Duration, len(ss))
	for i, s := range ss {
		walls[i], cpus[i] = s.wall, s.cpu
	}
	return stat.Quantile(walls, 0.5), stat.Quantile(cpus, 0.5)
}
