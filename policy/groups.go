package policy

import "time"

// A parsed file holds its groups and rules compactly, as offsets into the
// one string of everything it keeps, rather than as Groups and Rules: a
// Rule is 32 bytes and a Group 80, several times the few words that a
// decision needs, and a held file is mostly its rules. The Groups that
// Robots.Groups returns are built from this form on its first call, which
// a crawler that only decides never makes.

// rule is one valid Allow or Disallow line.
type rule struct {
	// end is where the rule's pattern ends in Robots.text; it starts where
	// the previous rule's ends, the first rule's at 0.
	end uint32
	// line is the rule's line, with ruleAllow set for an Allow.
	line uint32
}

// ruleAllow marks an Allow in rule.line. Lines fit below it, as Parse
// reads at most maxParse bytes.
const ruleAllow = 1 << 31

// group is one group of the file.
type group struct {
	line, endLine int32
	// agentsEnd and rulesEnd are where the group's agents end in
	// Robots.agentEnds and its rules in Robots.rules; they start where the
	// previous group's end, the first group's at 0.
	agentsEnd, rulesEnd uint32
	// delay is the group's Crawl-delay, or negative without one.
	delay time.Duration
	// disallows reports that the group holds a Disallow rule.
	disallows bool
}

// groupRules returns the range of Robots.rules that holds group gi's rules.
func (r *Robots) groupRules(gi int) (lo, hi int) {
	if gi > 0 {
		lo = int(r.groups[gi-1].rulesEnd)
	}
	return lo, int(r.groups[gi].rulesEnd)
}

// groupAgents returns the range of Robots.agentEnds that holds group gi's
// agents.
func (r *Robots) groupAgents(gi int) (lo, hi int) {
	if gi > 0 {
		lo = int(r.groups[gi-1].agentsEnd)
	}
	return lo, int(r.groups[gi].agentsEnd)
}

// agent returns agent k of the file, in file order. The agents follow the
// rules' patterns in Robots.text.
func (r *Robots) agent(k int) string {
	start := uint32(0)
	switch {
	case k > 0:
		start = r.agentEnds[k-1]
	case len(r.rules) > 0:
		start = r.rules[len(r.rules)-1].end
	}
	return r.text[start:r.agentEnds[k]]
}

// rule returns rule i of the file, in file order, as a Rule. Its pattern
// is part of Robots.text, so this does not allocate.
func (r *Robots) rule(i int) Rule {
	start := uint32(0)
	if i > 0 {
		start = r.rules[i-1].end
	}
	x := r.rules[i]
	return Rule{Allow: x.line&ruleAllow != 0, Pattern: r.text[start:x.end], Line: int(x.line &^ ruleAllow)}
}

// Groups returns the file's groups in file order.
//
// The first call builds them and publishes them atomically; calls that
// race to be first each build them and all return the one published, so
// that no call takes a lock.
func (r *Robots) Groups() []Group {
	if g := r.public.Load(); g != nil {
		return *g
	}
	g := r.buildGroups()
	if r.public.CompareAndSwap(nil, &g) {
		return g
	}
	return *r.public.Load()
}

// buildGroups builds the Groups of the file, in one slice for the
// groups, one for every group's agents and one for every group's rules.
func (r *Robots) buildGroups() []Group {
	if len(r.groups) == 0 {
		return nil
	}
	groups := make([]Group, len(r.groups))
	agents := make([]string, len(r.agentEnds))
	for k := range agents {
		agents[k] = r.agent(k)
	}
	var rules []Rule
	if len(r.rules) > 0 {
		rules = make([]Rule, len(r.rules))
		for i := range rules {
			rules[i] = r.rule(i)
		}
	}
	for gi, g := range r.groups {
		alo, ahi := r.groupAgents(gi)
		rlo, rhi := r.groupRules(gi)
		groups[gi] = Group{
			Agents:        agents[alo:ahi:ahi],
			Line:          int(g.line),
			EndLine:       int(g.endLine),
			CrawlDelay:    max(g.delay, 0),
			HasCrawlDelay: g.delay >= 0,
		}
		if rlo < rhi {
			groups[gi].Rules = rules[rlo:rhi:rhi]
		}
	}
	for _, l := range r.prefs {
		if l.group >= 0 {
			g := &groups[l.group]
			g.Preferences = append(g.Preferences, l.PreferenceLine)
		}
	}
	return groups
}

// normed is the normalised pattern of a rule that normalising changes
// (match.Normalize); a rule not in Robots.norms is its own.
type normed struct {
	rule int32
	norm string
}

// firstNorm returns the index in Robots.norms of the first rule at or
// after rule i that has one, or len(Robots.norms).
func (r *Robots) firstNorm(i int) int {
	lo, hi := 0, len(r.norms)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(r.norms[m].rule) < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
