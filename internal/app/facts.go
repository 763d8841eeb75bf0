package app

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// readFacts decodes the facts a stamp recorded as encoding/json decodes
// them into jsondoc.Facts, without its reflection, which a --field read
// would otherwise set up for this one small object (a twentieth of the
// read's own work): each array's members are matched without regard to
// case, the last of equal names winning, and a value of another type
// reads as zero. The facts are baton's, sealed with the stamps, and a
// reader checks every span against the mapped file before it uses one.
func readFacts(raw []byte) jsondoc.Facts {
	if !gjson.ValidBytes(raw) {
		return nil
	}
	doc := gjson.ParseBytes(raw)
	if !doc.IsObject() {
		return nil
	}
	facts := jsondoc.Facts{}
	doc.ForEach(func(k, v gjson.Result) bool {
		var f jsondoc.ArrayFacts                    // another type than an object: zero
		v.ForEach(func(name, x gjson.Result) bool { // nothing for a non-object
			switch {
			case strings.EqualFold(name.Str, "count"):
				setWhole(&f.Count, x)
			case strings.EqualFold(name.Str, "max_id"):
				setWhole(&f.MaxID, x)
			case strings.EqualFold(name.Str, "last"):
				setPair(&f.Last, x)
			case strings.EqualFold(name.Str, "span"):
				setPair(&f.Span, x)
			case strings.EqualFold(name.Str, "digest") && x.Type == gjson.String:
				f.Digest = x.Str
			}
			return true
		})
		facts[k.Str] = f
		return true
	})
	return facts
}

// setWhole sets *n to x when x is a JSON number without a fraction or an
// exponent that fits an int, and leaves it otherwise (null, another type,
// 1.5, 1e3, an overflow), as encoding/json does.
func setWhole(n *int, x gjson.Result) {
	if x.Type != gjson.Number {
		return
	}
	if v, err := strconv.Atoi(x.Raw); err == nil {
		*n = v
	}
}

// setPair decodes the array x into *p as encoding/json decodes into a
// [2]int: element by element (setWhole), the elements x lacks zeroed; a
// value that is not an array leaves *p.
func setPair(p *[2]int, x gjson.Result) {
	if !x.IsArray() {
		return
	}
	elems := x.Array()
	for i := range p {
		if i >= len(elems) {
			p[i] = 0
		} else {
			setWhole(&p[i], elems[i])
		}
	}
}
