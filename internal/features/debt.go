package features

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// A review's leftover issues become tech-debt items in two ways: baton
// records a passing review's minor issues and suggestions itself, and the
// predecessor's REVIEW prompt appends them too. DuplicateDebt keeps the
// second from doubling the first.

// ReviewRef normalises a source_review value: "R3", "r3", "3" and 3 are
// all "R3"; an architecture review stays "A3". Anything else is returned
// trimmed.
func ReviewRef(v gjson.Result) string {
	s := strings.TrimSpace(v.String())
	if s == "" {
		return ""
	}
	if _, err := strconv.Atoi(s); err == nil {
		return "R" + s
	}
	up := strings.ToUpper(s)
	if len(up) > 1 && (up[0] == 'R' || up[0] == 'A') {
		if _, err := strconv.Atoi(up[1:]); err == nil {
			return up
		}
	}
	return s
}

// issueOf is the issue id a debt entry names, if any.
func issueOf(e gjson.Result) string {
	for _, k := range []string{"source_issue", "issue_id"} {
		if v := strings.TrimSpace(e.Get(k).String()); v != "" {
			return v
		}
	}
	return ""
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// SameDebt reports whether two tech-debt entries record the same leftover
// issue: both name the same source review, and they name the same issue
// id, or the same location, or the same description.
func SameDebt(a, b []byte) bool {
	x, y := gjson.ParseBytes(a), gjson.ParseBytes(b)
	if x.Get("type").String() != TypeTechDebt || y.Get("type").String() != TypeTechDebt {
		return false
	}
	rx, ry := ReviewRef(x.Get("source_review")), ReviewRef(y.Get("source_review"))
	if rx == "" || rx != ry {
		return false
	}
	if ix, iy := issueOf(x), issueOf(y); ix != "" && ix == iy {
		return true
	}
	if lx, ly := norm(x.Get("location").String()), norm(y.Get("location").String()); lx != "" && lx == ly {
		return true
	}
	dx, dy := norm(x.Get("description").String()), norm(y.Get("description").String())
	return dx != "" && dx == dy
}

// DuplicateDebt returns the id of an item of the list that records the
// same leftover issue as entry (see SameDebt), or "".
func (f *File) DuplicateDebt(entry []byte) string {
	if gjson.GetBytes(entry, "type").String() != TypeTechDebt {
		return ""
	}
	for _, it := range f.items {
		if it.Type != TypeTechDebt {
			continue
		}
		if raw, ok := f.Raw(it.ID); ok && SameDebt(raw, entry) {
			return it.ID
		}
	}
	return ""
}
