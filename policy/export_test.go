package policy

import "math"

// FixDecisions makes every selection of r decide by its index (indexed)
// or by a pass over its rules however often it is decided, so that the
// external tests can hold both to the same cases. Its groups are looked
// up by the token index from then on.
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
	x := r.tokenIndex()
	for _, e := range x.agents {
		add(e.sel)
	}
	add(x.star)
	return all
}
