package reviews

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
)

// Ids are written several ways: show-issues prints a review as R3 and its
// issues as R3-M1 (A3-M1 for an architecture review), add-fix prints a fix
// as FIX-3, and people type 3. Every command that takes a review or fix id
// accepts the bare number and its own printed form, and says which kind of
// id it was given when it is the other kind.
var (
	reviewForm = regexp.MustCompile(`^[RA](\d+)$`)
	fixForm    = regexp.MustCompile(`^FIX-(\d+)$`)
	issueForm  = regexp.MustCompile(`^([RA])(\d+)-[CMS]\d+$`)
)

// ParseReviewID reads a review id given as 3, R3 or A3 (case-insensitive).
func ParseReviewID(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if n, ok := idNumber(t, reviewForm); ok {
		return n, nil
	}
	switch {
	case fixForm.MatchString(t):
		return 0, errs.New(errs.Usage, "%q is a fix id, not a review id: give the id of the review (3 or R3; 'baton reviews list' shows them)", s)
	case issueForm.MatchString(t):
		m := issueForm.FindStringSubmatch(t)
		return 0, errs.New(errs.Usage, "%q is an issue id, not a review id: the review it belongs to is R%s", s, m[2])
	}
	return 0, errs.New(errs.Usage, "%q is not a review id (write 3 or R3)", s)
}

// ParseFixID reads a fix id given as 3 or FIX-3 (case-insensitive).
func ParseFixID(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if n, ok := idNumber(t, fixForm); ok {
		return n, nil
	}
	if reviewForm.MatchString(t) {
		return 0, errs.New(errs.Usage, "%q is a review id, not a fix id: give the id of the fix (3 or FIX-3; 'baton reviews list' shows them)", s)
	}
	return 0, errs.New(errs.Usage, "%q is not a fix id (write 3 or FIX-3)", s)
}

// idNumber reads t as a bare positive number or as form's prefixed one.
func idNumber(t string, form *regexp.Regexp) (int, bool) {
	digits := t
	if m := form.FindStringSubmatch(t); m != nil {
		digits = m[1]
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}
