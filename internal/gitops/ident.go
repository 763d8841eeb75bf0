package gitops

import (
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// Signature is who made a commit, and when.
type Signature = object.Signature

// gitSignature is s as git writes it into a commit or a reflog line: the
// name and email without characters that would break the line, and a name
// when there is none.
func gitSignature(s Signature) Signature {
	s.Name, s.Email = identPart(s.Name), identPart(s.Email)
	if s.Name == "" {
		s.Name = "baton"
	}
	return s
}

// A commit's identity lines as git writes them: a name and an email
// without the characters that would end them early ('<', '>', a newline),
// trimmed of what git calls crud at either end; a date given the way git's
// GIT_AUTHOR_DATE and GIT_COMMITTER_DATE take it.

// crud is what git trims from either end of a name or an email.
func crud(r rune) bool {
	return r <= ' ' || strings.ContainsRune(".,:;<>\"\\'", r)
}

// identPart is s as git's ident code writes it: crud trimmed from the ends,
// '<', '>' and newlines dropped from the rest.
func identPart(s string) string {
	s = strings.TrimFunc(s, crud)
	return strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r == '\n' || r == 0 {
			return -1
		}
		return r
	}, s)
}

// gitDateLayouts are the date forms git's approxidate reads that people and
// scripts use: ISO 8601 (with 'T' or a space, with or without a zone) and
// RFC 2822.
var gitDateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05 -0700", "2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 Z07:00", "2006-01-02 15:04:05Z0700", time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 -0700", "Mon Jan 2 15:04:05 2006 -0700", "2006-01-02T15:04:05", "2006-01-02 15:04:05",
}

// ParseDate reads a date as git's GIT_AUTHOR_DATE and GIT_COMMITTER_DATE
// take it: git's own "seconds +hhmm" (or "@seconds [+hhmm]"), ISO 8601 or
// RFC 2822; a date without a zone is local time. ok is false for a form it
// does not read.
func ParseDate(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	raw := strings.Fields(strings.TrimPrefix(s, "@"))
	if len(raw) >= 1 && len(raw) <= 2 {
		if sec, err := strconv.ParseInt(raw[0], 10, 64); err == nil && (strings.HasPrefix(s, "@") || len(raw) == 2) {
			t = time.Unix(sec, 0).In(time.UTC)
			if len(raw) == 2 {
				z, err := time.Parse("-0700", raw[1])
				if err != nil {
					return time.Time{}, false
				}
				_, off := z.Zone()
				t = t.In(time.FixedZone("", off))
			}
			return t, true
		}
	}
	for _, layout := range gitDateLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
