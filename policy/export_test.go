package policy

import "math"

// FixDecisions makes every selection of r decide by its index (indexed)
// or by a pass over its rules however often it is decided, so that the
// external tests can hold both to the same cases.
func FixDecisions(r *Robots, indexed bool) {
	for _, s := range r.selections() {
		if indexed {
			s.index()
		} else {
			s.decided.Store(math.MinInt32)
		}
	}
}

// selections returns every selection of r, those that several tokens
// share once each.
func (r *Robots) selections() []*selection {
	var all []*selection
	seen := map[*selection]bool{}
	add := func(s *selection) {
		if s != nil && !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	for _, e := range r.agents {
		add(e.sel)
	}
	add(r.star)
	return all
}
