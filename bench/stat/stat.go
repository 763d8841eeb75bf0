// Package stat holds what the benchmark harnesses share: quantiles of
// timings, their formatting, ratios against targets, and facts about the
// machine a run took place on.
package stat

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Quantile is the q-quantile of d with linear interpolation between ranks.
func Quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + time.Duration(float64(s[lo+1]-s[lo])*(pos-float64(lo)))
}

// Ms formats a duration in milliseconds.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// Ratio is a/b, 0 when b is.
func Ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Verdict says whether a target was met.
func Verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// Human formats a byte count.
func Human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// LoadAvg is the one-minute load average ("" where unknown): timings are
// only comparable between runs on a similarly loaded machine.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// Terminal returns f when it is a terminal (for progress lines), else nil.
func Terminal(f *os.File) io.Writer {
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return f
	}
	return nil
}
