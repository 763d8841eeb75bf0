package schemacheck

import (
	"strconv"
	"strings"
	"time"
)

// isUUID: five groups of 8, 4, 4, 4 and 12 hex digits, joined by hyphens
// (RFC 4122's text form; any version, either case).
func isUUID(s string) bool {
	groups := strings.Split(s, "-")
	if len(groups) != 5 {
		return false
	}
	for i, n := range []int{8, 4, 4, 4, 12} {
		if len(groups[i]) != n || strings.Trim(groups[i], "0123456789abcdefABCDEF") != "" {
			return false
		}
	}
	return true
}

// isDateTime: RFC 3339's date-time, full-date "T" full-time, the T and Z
// in either case, a leap second only at 23:59:60 UTC.
func isDateTime(s string) bool {
	if len(s) < 20 || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	if _, err := time.Parse("2006-01-02", s[:10]); err != nil {
		return false
	}
	return isTime(s[11:])
}

// isTime: RFC 3339's full-time, hh:mm:ss[.frac] then Z or ±hh:mm.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := num(s[0:2], 23)
	m, ok2 := num(s[3:5], 59)
	sec, ok3 := num(s[6:8], 60)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	s = s[8:]
	if frac, ok := strings.CutPrefix(s, "."); ok {
		digits := len(frac) - len(strings.TrimLeft(frac, "0123456789"))
		if digits == 0 {
			return false
		}
		s = frac[digits:]
	}
	if s != "Z" && s != "z" {
		if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
			return false
		}
		zh, ok1 := num(s[1:3], 23)
		zm, ok2 := num(s[4:6], 59)
		if !ok1 || !ok2 {
			return false
		}
		// the time in UTC, for the leap-second rule
		off := zh*60 + zm
		if s[0] == '+' {
			off = -off
		}
		hm := (h*60 + m + off + 24*60) % (24 * 60)
		h, m = hm/60, hm%60
	}
	return sec < 60 || (h == 23 && m == 59)
}

// num parses two decimal digits no greater than limit.
func num(s string, limit int) (int, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	n, _ := strconv.Atoi(s)
	return n, n <= limit
}
