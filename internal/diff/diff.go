// Package diff compares two robots.txt files as a release check does:
// which URLs change decision, for which crawlers, and by which lines of
// each file. The robotstxt command's diff and the explorer's comparison
// share it.
package diff

import (
	"slices"
	"strings"

	"github.com/crawlkit/robots/internal/norm"
	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/internal/target"
	"github.com/crawlkit/robots/policy"
)

// Change is a URL whose decision differs between the two files for one
// crawler.
type Change struct {
	// Agent names the crawler: its product tokens, most specific first,
	// joined by commas.
	Agent string `json:"agent"`
	URL   string `json:"url"`
	// Old and New are the decisions in each file, with the deciding rule
	// and its line.
	Old report.Decision `json:"old"`
	New report.Decision `json:"new"`
}

// Result is what Compare found.
type Result struct {
	Agents  []string `json:"agents"` // the crawlers compared, as in Change.Agent
	URLs    []string `json:"urls"`   // the URLs compared
	Changes []Change `json:"changes"`
	// Compared is the number of decisions compared in each file: agents
	// times URLs, less the URLs that cannot be read.
	Compared int `json:"compared"`
	// Unreadable are the URLs that are neither a path nor an http(s)
	// URL; they are not compared.
	Unreadable []string `json:"unreadable,omitempty"`
}

// MaxDecisions is the most decisions one comparison makes in each file,
// URLs times crawlers, in the command and the explorer alike: a file
// naming many crawlers with many rules would otherwise make millions,
// each change held until it is printed (1,000 crawlers took 8.5 GB).
const MaxDecisions = 1_000_000

// Compare decides every URL for every crawler (each a list of product
// tokens, most specific first) in both files, as the transport would, and
// returns the decisions that changed.
func Compare(old, new *policy.Robots, agents [][]string, urls []string) Result {
	res := Result{Agents: make([]string, len(agents)), URLs: urls, Changes: []Change{}}
	for i, tokens := range agents {
		res.Agents[i] = strings.Join(tokens, ",")
	}
	for _, u := range urls {
		path, err := target.Target(u)
		if err != nil {
			res.Unreadable = append(res.Unreadable, u)
			continue
		}
		for i, tokens := range agents {
			res.Compared++
			// Only a changed decision is worth its explanation.
			if old.Decide(path, tokens...).Allowed == new.Decide(path, tokens...).Allowed {
				continue
			}
			res.Changes = append(res.Changes, Change{Agent: res.Agents[i], URL: u,
				Old: report.Decide(old, u, tokens...), New: report.Decide(new, u, tokens...)})
		}
	}
	return res
}

// Agents returns every crawler either file names, each as one product
// token, in the order the files first name them (the old file first),
// then "*" for every other crawler. Names without a product token, which
// no crawler matches, are left out.
func Agents(files ...*policy.Robots) [][]string {
	var out [][]string
	seen := map[string]bool{"*": true}
	for _, r := range files {
		for _, g := range r.Groups() {
			for _, a := range g.Agents {
				key := norm.Lower(a)
				if seen[key] || policy.ProductToken(a) != a {
					continue
				}
				seen[key] = true
				out = append(out, []string{a})
			}
		}
	}
	return append(out, []string{"*"})
}

// URLs returns the URLs worth comparing for the rules of files: for each
// pattern, the path it is written for (wildcards filled, the end anchor
// dropped) and the neighbours a release check lists beside an intended
// block, as testdata/conformance's seed suites do: a path inside it (an
// exception would live there), a query variant, the path capitalised, and
// a prefix neighbour that only a prefix match catches; and "/". The URLs
// are deduplicated and sorted.
func URLs(files ...*policy.Robots) []string {
	set := map[string]bool{"/": true}
	for _, r := range files {
		for _, g := range r.Groups() {
			for _, rule := range g.Rules {
				for _, u := range neighbours(rule.Pattern) {
					set[u] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for u := range set {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// neighbours returns the URLs compared for one pattern.
func neighbours(pattern string) []string {
	// The path the pattern is written for: "*" filled with one letter,
	// so that the sample is matched through the wildcard, and "$" dropped.
	p := strings.ReplaceAll(strings.TrimSuffix(pattern, "$"), "*", "x")
	if p == "" || p[0] != '/' {
		return nil
	}
	out := []string{p}
	dir := strings.HasSuffix(p, "/")
	if dir {
		out = append(out, p+"x", strings.TrimSuffix(p, "/"))
	} else {
		out = append(out, p+"/x", p+"x")
	}
	if !strings.Contains(p, "?") {
		out = append(out, p+"?x=1")
	}
	if c := capitalised(p); c != p {
		out = append(out, c)
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// capitalised returns p with the first letter of its last segment upper
// case: "/drafts/Public" for "/drafts/public", to catch a rule that
// relies on case-sensitive matching.
func capitalised(p string) string {
	end := strings.TrimRight(p, "/")
	start := strings.LastIndexByte(end, '/') + 1
	for i := start; i < len(end); i++ {
		if c := end[i]; 'a' <= c && c <= 'z' {
			return p[:i] + string(c-'a'+'A') + p[i+1:]
		}
	}
	return p
}
