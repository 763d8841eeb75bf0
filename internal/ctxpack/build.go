package ctxpack

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Item is one piece of context (seed 002's ContextItem).
type Item struct {
	ID         string   `json:"context_item_id"`
	Kind       string   `json:"kind"` // task, project or global
	Source     string   `json:"source"`
	Timestamp  string   `json:"timestamp,omitempty"`
	Tags       []string `json:"tags"`
	Importance float64  `json:"importance"`
	TokenCost  int      `json:"token_cost"`
	Title      string   `json:"title"`
	Payload    string   `json:"payload"`
}

// Request is what was asked for (seed 002's ContextRequest).
type Request struct {
	ID           string   `json:"context_request_id"`
	BudgetTokens int      `json:"budget_tokens"`
	Domains      []string `json:"domains"`
	HistoryTypes []string `json:"history_types"`
	Mode         string   `json:"mode"`
	AgentProfile string   `json:"agent_profile"`
}

// Omitted names an item left out for the budget.
type Omitted struct {
	ID        string `json:"context_item_id"`
	Title     string `json:"title"`
	TokenCost int    `json:"token_cost"`
}

// Package is the assembled context (seed 002's ContextPackage): the items
// that fit the budget, best first, and those left out, whole.
type Package struct {
	ID               string    `json:"context_package_id"`
	Request          Request   `json:"request"`
	Items            []Item    `json:"items"`
	Omitted          []Omitted `json:"omitted"`
	Summary          string    `json:"summary"`
	TokenCost        int       `json:"token_cost"`
	CompressionRatio float64   `json:"compression_ratio"`
}

// DefaultBudget is the budget when none is given, in tokens.
const DefaultBudget = 4000

// Tokens estimates the tokens of s: about four bytes a token, the usual
// rule for English text and code with BPE tokenizers.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Build assembles the package for in within budget tokens (0: the
// default). Items are ranked by importance (ties keep their order) and
// taken while they fit; an item that does not fit is left out whole and
// listed in Omitted, never cut.
func Build(in Input, budget int) Package {
	if budget <= 0 {
		budget = DefaultBudget
	}
	all := candidates(in)
	for i := range all {
		all[i].TokenCost = Tokens(all[i].Title) + Tokens(all[i].Payload) + 2
	}
	ranked := append([]Item(nil), all...)
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].Importance > ranked[j].Importance })
	p := Package{Items: []Item{}, Omitted: []Omitted{}}
	total := 0
	for _, it := range ranked {
		total += it.TokenCost
		if p.TokenCost+it.TokenCost > budget {
			p.Omitted = append(p.Omitted, Omitted{ID: it.ID, Title: it.Title, TokenCost: it.TokenCost})
			continue
		}
		p.Items = append(p.Items, it)
		p.TokenCost += it.TokenCost
	}
	p.CompressionRatio = 1
	if total > 0 {
		p.CompressionRatio = float64(int(float64(p.TokenCost)/float64(total)*1000+0.5)) / 1000
	}
	p.Request = Request{ID: fmt.Sprintf("ctxreq-%s-s%d", strings.ToLower(string(in.Situation)), in.Session), BudgetTokens: budget,
		Domains: []string{"task", "git", "rules", "docs"}, HistoryTypes: []string{"summaries", "reviews", "fixes"},
		Mode: string(in.Situation), AgentProfile: in.Situation.Role()}
	p.ID = packageID(p.Items)
	p.Summary = fmt.Sprintf("%s context: %d of %d items, %d tokens (budget %d)", in.Situation, len(p.Items), len(all), p.TokenCost, budget)
	return p
}

func packageID(items []Item) string {
	h := sha256.New()
	for _, it := range items {
		h.Write([]byte(it.ID + "\x00" + it.Payload + "\x00"))
	}
	return "ctx-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// Text renders the package for an agent to read: each item under its
// title, best first, and what was left out for the budget.
func (p Package) Text() string {
	var b strings.Builder
	for _, it := range p.Items {
		fmt.Fprintf(&b, "## %s\n%s\n\n", it.Title, strings.TrimRight(it.Payload, "\n"))
	}
	if len(p.Omitted) > 0 {
		var names []string
		need := p.TokenCost
		for _, o := range p.Omitted {
			names = append(names, fmt.Sprintf("%s (%d tokens)", o.Title, o.TokenCost))
			need += o.TokenCost
		}
		fmt.Fprintf(&b, "Left out for the budget of %d tokens: %s. 'baton context --budget %d' shows everything.\n",
			p.Request.BudgetTokens, strings.Join(names, "; "), need)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }
