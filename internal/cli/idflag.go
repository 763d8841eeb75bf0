package cli

import (
	"strconv"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/reviews"
)

// idFlag is a review or fix id flag: it accepts every form baton prints
// (3, R3 or A3 for a review; 3 or FIX-3 for a fix) and rejects the other
// kind of id with a message saying which kind it is.
type idFlag struct {
	p     *int
	parse func(string) (int, error)
	kind  string
}

func reviewIDFlag(p *int) *idFlag {
	return &idFlag{p: p, parse: reviews.ParseReviewID, kind: "REVIEW_ID"}
}

func (f *idFlag) String() string {
	if f.p == nil || *f.p == 0 {
		return ""
	}
	return strconv.Itoa(*f.p)
}

func (f *idFlag) Set(s string) error {
	n, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.p = n
	return nil
}

func (f *idFlag) Type() string { return f.kind }

// idArg parses a positional review or fix id, naming the argument.
func idArg(name, s string, parse func(string) (int, error)) (int, error) {
	n, err := parse(s)
	if err != nil {
		return 0, errs.New(errs.Usage, "%s: %v", name, err)
	}
	return n, nil
}
