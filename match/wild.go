package match

import (
	"slices"
	"strings"
)

// wildIndex holds the wildcard-first rules, and with more than groupedRuns
// runs a filter of the octets that they start with.
type wildIndex struct {
	index
	maxLen int        // length of the longest pattern, to skip the search
	filter *runFilter // nil with at most groupedRuns runs
	// Without a filter, the runs by the octet a lookup looks for to find
	// them (see groupRuns).
	groups []runGroup
}

// runGroup is the runs a lookup finds by looking for one octet: each
// run k of the index, found at so many octets before the octet.
type runGroup struct {
	octet byte
	runs  []groupedRun
	mask  uint64 // the bits 1<<k of its runs
}

type groupedRun struct {
	run   string
	k, at int32
}

// groupedRuns is the number of wildcard-first runs up to which a lookup
// looks for the runs by a few octets, one pass over the path for each,
// rather than for the runs at each position.
const groupedRuns = 64

// octetShare is how many of 10,000 octets of URL paths are each octet,
// as counted in the 10,000 paths of the robots corpus; each octet not
// listed is rarer than 10 in 10,000, and counted as 5.
var octetShare = func() (t [256]uint16) {
	for c := range t {
		t[c] = 5
	}
	for c, n := range map[byte]uint16{
		'e': 651, '/': 649, 's': 526, 't': 492, 'a': 474, 'i': 453, 'o': 433, 'c': 375, 'r': 372, '-': 324,
		'p': 316, 'd': 296, '2': 273, 'm': 272, 'n': 263, '=': 228, 'l': 209, '5': 197, '3': 196, '9': 195,
		'1': 189, '0': 188, '6': 188, '7': 186, '8': 186, '4': 184, 'u': 178, 'f': 175, 'g': 158, 'b': 134,
		'&': 131, 'h': 119, 'v': 95, 'w': 91, '?': 91, '.': 83, '%': 74, 'j': 64, '_': 44, 'k': 32,
		'y': 30, 'A': 26, 'x': 21, 'E': 17, 'C': 15, 'z': 11, 'q': 10,
	} {
		t[c] = n
	}
	return t
}()

// The expected work of looking for runs by an octet, in instructions on
// a path of typicalPath octets: a pass over the path, and at each place
// the octet is found, a step and a comparison of each run looked for by
// it.
const (
	typicalPath = 43
	passCost    = 40
	hitCost     = 6
	runCost     = 15
)

// groupRuns readies w to look for its runs by octets, chosen greedily:
// the octet that finds the most runs left for the least expected work
// per run (see passCost), until every run has one. Runs that share an
// octet share a pass, and a rare octet is found in few places.
func (w *wildIndex) groupRuns() {
	keys := w.kept.keys
	grouped := make([]bool, len(keys))
	var mark [256]int
	gen := 0
	for left := len(keys); left > 0; {
		var count [256]int
		for k, run := range keys {
			if grouped[k] {
				continue
			}
			gen++
			for i := range len(run) {
				if c := run[i]; mark[c] != gen {
					mark[c] = gen
					count[c]++
				}
			}
		}
		best, bestCost := 0, 0.0
		for c, n := range count {
			if n == 0 {
				continue
			}
			hits := float64(octetShare[c]) * typicalPath / 10000
			if cost := (passCost + hits*(hitCost+runCost*float64(n))) / float64(n); bestCost == 0 || cost < bestCost {
				best, bestCost = c, cost
			}
		}
		g := runGroup{octet: byte(best)}
		for k, run := range keys {
			if i := strings.IndexByte(run, g.octet); !grouped[k] && i >= 0 {
				grouped[k] = true
				g.runs = append(g.runs, groupedRun{run: run, k: int32(k), at: int32(i)})
				g.mask |= 1 << k
				left--
			}
		}
		w.groups = append(w.groups, g)
	}
}

// lookupGrouped returns the better of best and the best rule of w's runs
// that p holds, finding the runs by their groups' octets: each run that
// p holds is tried once. A path that holds a group's octet maxHits times
// has each of its runs not yet found looked for on its own, so that a
// path of one octet repeated costs no comparison per octet.
func (s *Set) lookupGrouped(w *wildIndex, p string, best int32) int32 {
	var tried uint64
	for gi := range w.groups {
		g := &w.groups[gi]
	scan:
		for i, hits := 0, 0; i < len(p); i++ {
			j := strings.IndexByte(p[i:], g.octet)
			if j < 0 {
				break
			}
			i += j
			for ri := range g.runs {
				r := &g.runs[ri]
				start := i - int(r.at)
				if start >= 0 && start+len(r.run) <= len(p) && p[start] == r.run[0] && tried&(1<<r.k) == 0 && p[start:start+len(r.run)] == r.run {
					tried |= 1 << r.k
					best = s.try(&w.index, r.k, p, best)
					if tried&g.mask == g.mask {
						break scan // the group's runs are all found
					}
				}
			}
			if hits++; hits == maxHits {
				for ri := range g.runs {
					if r := &g.runs[ri]; tried&(1<<r.k) == 0 && strings.Contains(p, r.run) {
						tried |= 1 << r.k
						best = s.try(&w.index, r.k, p, best)
					}
				}
				break
			}
		}
	}
	return best
}

// maxHits is how many times a lookup finds a group's octet in a path
// before it looks for the group's runs one by one.
const maxHits = 8

// runFilter tells, so that most positions of a path are skipped without
// a search, which octets the runs start with: first, the first octet of
// every run, which rejects most positions with one test; then the first
// octet of one-octet runs, the first two of two- and three-octet runs,
// and a hash of the first four of longer runs, in a table of about 16
// bits per run.
type runFilter struct {
	first  [256]bool  // first octet of every run, a byte each: one load tests it
	single [4]uint64  // first octet of one-octet runs
	pairs  [16]uint64 // hash of the first two octets of two- and three-octet runs
	quads  []uint64   // hash of the first four octets of longer runs
	shift  uint       // quadBit's shift: 32 less log2 of the bits in quads
}

func newRunFilter(keys []string) *runFilter {
	f := &runFilter{shift: 32 - 6}
	for bits := 64; bits < 16*len(keys); bits *= 2 {
		f.shift--
	}
	f.quads = make([]uint64, 1<<(32-f.shift)/64)
	for _, k := range keys {
		f.first[k[0]] = true
		switch {
		case len(k) == 1:
			set(f.single[:], uint(k[0]))
		case len(k) < 4:
			set(f.pairs[:], pairBit(k[0], k[1]))
		default:
			set(f.quads, f.quadBit(k))
		}
	}
	return f
}

func pairBit(a, b byte) uint { return (uint(a)*131 + uint(b)) & 1023 }

func (f *runFilter) quadBit(s string) uint {
	x := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	return uint(x * 0x9e3779b1 >> f.shift)
}

// starts reports whether some run may start at p[i].
func (f *runFilter) starts(p string, i int) bool {
	c := p[i]
	if !f.first[c] {
		return false
	}
	if has(f.single[:], uint(c)) {
		return true
	}
	if i+1 == len(p) {
		return false
	}
	if has(f.pairs[:], pairBit(c, p[i+1])) {
		return true
	}
	return i+4 <= len(p) && has(f.quads, f.quadBit(p[i:]))
}

func has(bits []uint64, i uint) bool { return bits[i>>6]&(1<<(i&63)) != 0 }

func set(bits []uint64, i uint) { bits[i>>6] |= 1 << (i & 63) }

// lookupFiltered returns the better of best and the best rule of w's
// runs that p holds, for a set with more than groupedRuns runs: at each
// position of the path whose octets start some run, it finds the runs
// starting there. A run found again further on would only test the same
// rules against the same path, so the last few nodes tried are
// remembered and skipped, which keeps a path that repeats one run
// ("/aaaa…") from testing its rules at every position.
func (s *Set) lookupFiltered(w *wildIndex, p string, best int32) int32 {
	var seen [8]int32
	next := 0
	for i := range seen {
		seen[i] = -1
	}
	f := w.filter
	for i := 0; i < len(p); i++ {
		// The first octet alone rejects most positions: tested here, it
		// costs no call.
		if !f.first[p[i]] || !f.starts(p, i) {
			continue
		}
		for k := w.greatest(s, p[i:]); k >= 0; k = w.nodes[k].parent {
			if !strings.HasPrefix(p[i:], w.kept.keys[k]) || slices.Contains(seen[:], k) {
				continue
			}
			seen[next] = k
			next = (next + 1) % len(seen)
			best = s.try(&w.index, k, p, best)
		}
	}
	return best
}
