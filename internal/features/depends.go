package features

import (
	"fmt"
	"slices"
	"strings"
)

// badDependencies finds the first item, from index from on, whose
// depends_on names an id the list does not hold or the item itself, or
// through which depends_on runs in a cycle (-1 and "" when none does).
// Items before from are known to be sound: a cycle runs through a later
// one.
func badDependencies(items []Feature, from int) (int, string) {
	index := make(map[string]int, len(items))
	for i, it := range items {
		index[it.ID] = i
	}
	for i := from; i < len(items); i++ {
		for _, d := range items[i].DependsOn {
			if d == items[i].ID {
				return i, fmt.Sprintf("%s depends on itself", d)
			}
			if _, ok := index[d]; !ok {
				return i, fmt.Sprintf("%s depends on %s, which is not in the feature list", items[i].ID, d)
			}
		}
	}
	state := make([]int, len(items)) // 0 not seen, 1 on the path, 2 done
	var path []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = 1
		path = append(path, items[i].ID)
		for _, d := range items[i].DependsOn {
			j := index[d]
			if state[j] == 1 {
				return append(slices.Clone(path[slices.Index(path, d):]), d)
			}
			if state[j] == 0 {
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		state[i], path = 2, path[:len(path)-1]
		return nil
	}
	for i := from; i < len(items); i++ {
		if state[i] == 0 {
			if c := visit(i); c != nil {
				return index[c[0]], "depends_on runs in a cycle: " + strings.Join(c, " -> ")
			}
		}
	}
	return -1, ""
}

// ReadyFirst returns the items not passing, optionally of one kind: those
// whose depends_on all pass first, then the others, each in file order.
func (f *File) ReadyFirst(kind string) []Feature {
	var ready, waiting []Feature
	for _, it := range f.Pending(kind) {
		if f.ready(it) {
			ready = append(ready, it)
		} else {
			waiting = append(waiting, it)
		}
	}
	return append(ready, waiting...)
}

// ready says whether every id it depends on passes.
func (f *File) ready(it Feature) bool {
	for _, id := range it.DependsOn {
		if d, err := f.Get(id); err != nil || !d.Passes {
			return false
		}
	}
	return true
}
