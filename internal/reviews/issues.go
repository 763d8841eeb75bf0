package reviews

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// Severities in the order they are stored and shown, with the letter each
// gives an issue id (R1-C1, R1-M2, R1-m1, R1-S1).
var Severities = []string{"critical", "major", "minor", "suggestions"}

var severityLetter = map[string]string{"critical": "C", "major": "M", "minor": "m", "suggestions": "S"}

var severityAliases = map[string]string{
	"critical": "critical", "blocker": "critical",
	"major": "major", "high": "major",
	"minor": "minor", "low": "minor",
	"suggestion": "suggestions", "suggestions": "suggestions", "nit": "suggestions",
}

// Issue is one review finding as baton reads it; the stored object keeps any
// other field the reviewer gave.
type Issue struct {
	ID          string `json:"id"`
	Severity    string `json:"severity,omitempty"`
	Description string `json:"description"`
	Location    string `json:"location,omitempty"`
	Suggestion  string `json:"suggestion,omitempty"`
}

// PendingIssue is an issue parsed from input, before its id is settled.
type PendingIssue struct {
	Severity string
	obj      *jsondoc.Object
	ID       string
	where    string // e.g. "major[0]" or "[3]", for messages
}

// ParseIssues reads --issues input: the seed's grouped object
// ({"critical": [...], "major": [...], ...}) or a flat list whose items carry
// "severity". Syntax errors name the line and column within the input.
func ParseIssues(arg string, input []byte) ([]PendingIssue, error) {
	if err := jsondoc.Check(input); err != nil {
		ie := err.(*jsondoc.InvalidError)
		line, col := jsondoc.Position(input, ie.Offset)
		return nil, errs.New(errs.Usage, "%s: invalid JSON at line %d, column %d: %s", arg, line, col, ie.Msg)
	}
	r := gjson.ParseBytes(input)
	var out []PendingIssue
	var err error
	switch {
	case r.IsArray():
		i := 0
		r.ForEach(func(_, v gjson.Result) bool {
			where := fmt.Sprintf("[%d]", i)
			i++
			sev := v.Get("severity").String()
			canon, ok := severityAliases[strings.ToLower(sev)]
			if !ok {
				err = errs.New(errs.Usage, "%s: item %s: severity must be critical, major, minor or suggestion, found %q", arg, where, sev)
				return false
			}
			var p PendingIssue
			p, err = pending(arg, where, canon, v, true)
			out = append(out, p)
			return err == nil
		})
	case r.IsObject():
		r.ForEach(func(k, v gjson.Result) bool {
			canon, ok := severityAliases[strings.ToLower(k.Str)]
			if !ok {
				err = errs.New(errs.Usage, "%s: unknown group %q (use critical, major, minor, suggestions)", arg, k.Str)
				return false
			}
			if !v.IsArray() {
				err = errs.New(errs.Usage, "%s: %s must be a list of issues", arg, k.Str)
				return false
			}
			i := 0
			v.ForEach(func(_, item gjson.Result) bool {
				var p PendingIssue
				p, err = pending(arg, fmt.Sprintf("%s[%d]", k.Str, i), canon, item, false)
				i++
				out = append(out, p)
				return err == nil
			})
			return err == nil
		})
	default:
		return nil, errs.New(errs.Usage, "%s: must be a JSON object grouped by severity or a list of issues", arg)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func pending(arg, where, sev string, v gjson.Result, flat bool) (PendingIssue, error) {
	if !v.IsObject() {
		return PendingIssue{}, errs.New(errs.Usage, "%s: item %s must be an object with a description", arg, where)
	}
	if d := v.Get("description"); d.Type != gjson.String || strings.TrimSpace(d.Str) == "" {
		return PendingIssue{}, errs.New(errs.Usage, "%s: item %s needs a non-empty \"description\"", arg, where)
	}
	obj, err := jsondoc.ParseObject([]byte(v.Raw), 0)
	if err != nil {
		return PendingIssue{}, err
	}
	if flat {
		obj.Members = removeKey(obj.Members, "severity") // the group says it now
	}
	id := v.Get("id")
	if id.Exists() && id.Type != gjson.String {
		return PendingIssue{}, errs.New(errs.Usage, "%s: item %s: id must be a string like R1-M1", arg, where)
	}
	return PendingIssue{Severity: sev, obj: obj, ID: id.Str, where: where}, nil
}

func removeKey(ms []jsondoc.Member, key string) []jsondoc.Member {
	out := ms[:0]
	for _, m := range ms {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

// IssuePrefix is the id prefix of a review's issues: R for feature reviews,
// A for architecture reviews.
func IssuePrefix(agentType string, reviewID int) string {
	if agentType == "ARCHITECTURE" {
		return fmt.Sprintf("A%d-", reviewID)
	}
	return fmt.Sprintf("R%d-", reviewID)
}

// AssignIDs checks the ids given and numbers the rest, then returns the
// issues grouped as the seed stores them.
func AssignIDs(issues []PendingIssue, prefix string) (json.RawMessage, error) {
	used := map[string]bool{}
	next := map[string]int{}
	for _, p := range issues {
		if p.ID == "" {
			continue
		}
		want := prefix + severityLetter[p.Severity]
		num := strings.TrimPrefix(p.ID, want)
		n, err := strconv.Atoi(num)
		if !strings.HasPrefix(p.ID, want) || err != nil || n < 1 || strconv.Itoa(n) != num {
			return nil, errs.New(errs.Usage, "--issues: item %s: id %q does not fit this review; a %s issue here is %sN (or leave id out to have it assigned)", p.where, p.ID, strings.TrimSuffix(p.Severity, "s"), want)
		}
		if used[p.ID] {
			return nil, errs.New(errs.Usage, "--issues: id %q is given twice", p.ID)
		}
		used[p.ID] = true
	}
	groups := map[string][]json.RawMessage{}
	for _, p := range issues {
		if p.ID == "" {
			letter := severityLetter[p.Severity]
			for {
				next[letter]++
				cand := prefix + letter + strconv.Itoa(next[letter])
				if !used[cand] {
					p.ID = cand
					used[cand] = true
					break
				}
			}
		}
		// id first, as the seed shows it
		p.obj.Members = append([]jsondoc.Member{{Key: "id", Raw: quoteJSON(p.ID)}}, removeKey(p.obj.Members, "id")...)
		groups[p.Severity] = append(groups[p.Severity], json.RawMessage(p.obj.Bytes()))
	}
	var b strings.Builder
	b.WriteString("{")
	for i, sev := range Severities {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:[", sev)
		for j, raw := range groups[sev] {
			if j > 0 {
				b.WriteString(",")
			}
			var c bytes.Buffer
			if err := json.Compact(&c, raw); err != nil {
				return nil, err
			}
			b.Write(c.Bytes()) // json.Compact does not escape HTML, unlike json.Marshal
		}
		b.WriteString("]")
	}
	b.WriteString("}")
	return json.RawMessage(b.String()), nil
}

func quoteJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// ReadIssues returns a stored review's issues in severity order, whichever
// form they were stored in (grouped, or the predecessor's flat list).
func ReadIssues(issues gjson.Result) []Issue {
	var out []Issue
	add := func(sev string, v gjson.Result) {
		out = append(out, Issue{
			ID: v.Get("id").String(), Severity: sev,
			Description: v.Get("description").String(),
			Location:    v.Get("location").String(),
			Suggestion:  v.Get("suggestion").String(),
		})
	}
	switch {
	case issues.IsObject():
		for _, sev := range Severities {
			issues.Get(sev).ForEach(func(_, v gjson.Result) bool { add(sev, v); return true })
		}
	case issues.IsArray():
		issues.ForEach(func(_, v gjson.Result) bool {
			sev, ok := severityAliases[strings.ToLower(v.Get("severity").String())]
			if !ok {
				sev = "minor"
			}
			add(sev, v)
			return true
		})
		sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Severity) < rank(out[j].Severity) })
	}
	return out
}

func rank(sev string) int {
	for i, s := range Severities {
		if s == sev {
			return i
		}
	}
	return len(Severities)
}

// Blocking reports whether any issue is critical or major.
func Blocking(issues []Issue) bool {
	for _, is := range issues {
		if is.Severity == "critical" || is.Severity == "major" {
			return true
		}
	}
	return false
}

// Raw returns the issue object as given (without its severity field).
func (p PendingIssue) Raw() []byte { return p.obj.Bytes() }
