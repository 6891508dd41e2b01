package match

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
)

// Rule is one Allow or Disallow line: a compiled pattern and its kind.
type Rule struct {
	Pattern Pattern
	Allow   bool
}

// Set is an immutable collection of rules that finds the rule deciding a
// path by the precedence of RFC 9309 section 2.2.2: the longest matching
// pattern wins, and an Allow wins a tie. A Set is safe for concurrent use.
//
// Rules are indexed by their literal prefix, so a lookup only tries the
// rules whose prefix the path starts with, however many rules the set
// holds. Rules that start with a wildcard ("*.pdf", "/*?sort=") share the
// empty or "/" prefix, which every path starts with; they are indexed
// instead by their first literal run after it, and a lookup only tries
// those whose run occurs in the path.
type Set struct {
	// Every rule is its normalised pattern and one word of the rest,
	// rather than a Rule, which is half as large again: a held robots.txt
	// file is mostly its rules.
	norms []string
	meta  []uint32   // see packRule
	lit   index      // rules by literal prefix
	wild  *wildIndex // wildcard-first rules by first literal run, or nil
}

// index finds, among a sorted list of distinct keys, every key that is a
// prefix of a string: the greatest key not after the string, then its
// chain of parents, each the longest other key that is a prefix of it.
// Every key that is a prefix of the string lies on that chain, since the
// keys sorted between such a key and the string all extend it.
type index struct {
	nodes []node    // one per distinct key, sorted by key, then a sentinel
	order []int32   // rule indexes, grouped by key in node order, best first
	kept  *keptKeys // nil when keys are found through their rules
	// heads[k] is octets 0 to 7 of key k, big-endian, zero past its end,
	// unless kept has words: most steps of a search then compare two
	// integers, with no load of the key and no call.
	heads []uint64
}

// keptKeys holds the keys of an index in an array of their own.
type keptKeys struct {
	keys []string
	// With many keys, slash[c] is the first node whose key is not before
	// "/" followed by octet c, so that a search for a path starting so
	// starts among the keys that share those two octets.
	slash *[257]int32
	// With slash, words[2*k] and words[2*k+1] are octets 2 to 9 and 10
	// to 17 of key k, big-endian, zero past its end, so that most steps
	// of a search compare two integers rather than two strings.
	words []uint64
}

// greatest returns the last key in [lo, hi) not after at, whose words
// are a and b, or lo-1. The search over the words takes no branch that
// depends on them: in a large set each step is a load from far away, and
// a mispredicted branch would wait for it. Keys whose words equal at's
// are then told apart by their text.
func (kk *keptKeys) greatest(lo, hi int, a, b uint64, at string) int32 {
	words := kk.words
	base, n := lo, hi-lo
	if n == 0 {
		return int32(lo - 1)
	}
	for n > 1 {
		half := n >> 1
		m := base + half
		// borrow is 0 when key m's words are not after at's.
		_, borrow := bits.Sub64(b, words[2*m+1], 0)
		_, borrow = bits.Sub64(a, words[2*m], borrow)
		base += int(uint64(half) & (borrow - 1))
		n -= half
	}
	_, borrow := bits.Sub64(b, words[2*base+1], 0)
	_, borrow = bits.Sub64(a, words[2*base], borrow)
	r := base - int(borrow)
	if r < lo || words[2*r] != a || words[2*r+1] != b {
		return int32(r)
	}
	// The keys of a run ending at r share at's words; runs are short, so
	// its start is found by steps back that double, then a search.
	first, step := r, 1
	for first-step >= lo && words[2*(first-step)] == a && words[2*(first-step)+1] == b {
		first -= step
		step <<= 1
	}
	for before := max(first-step, lo-1); first-before > 1; {
		m := int(uint(before+first) >> 1)
		if words[2*m] == a && words[2*m+1] == b {
			first = m
		} else {
			before = m
		}
	}
	// Keys first to r share at's words: the last of them not after at.
	for hi := r + 1; first < hi; {
		m := int(uint(first+hi) >> 1)
		if kk.keys[m] <= at {
			first = m + 1
		} else {
			hi = m
		}
	}
	return int32(first - 1)
}

// wordAt returns octets i to i+7 of s as a big-endian word, zero past
// its end. Words so read at one offset are ordered as the strings are, or
// equal when the strings agree on those octets or differ only by zeros
// past the shorter's end.
func wordAt(s string, i int) uint64 {
	if len(s) >= i+8 {
		return binary.BigEndian.Uint64([]byte(s[i : i+8]))
	}
	var buf [8]byte
	if i < len(s) {
		copy(buf[:], s[i:])
	}
	return binary.BigEndian.Uint64(buf[:])
}

type node struct {
	start  int32 // the node's rules are order[start:next node's start]
	parent int32 // the node of the longest other key prefixing this one, or -1
}

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

// Bits of a rule's meta word above its prefix length.
const (
	metaAllow    = 1 << 31
	metaAnchored = 1 << 30
	metaWild     = 1 << 29
	metaPrefix   = metaWild - 1
)

func packRule(r Rule) uint32 {
	m := uint32(r.Pattern.prefix) & metaPrefix
	if r.Allow {
		m |= metaAllow
	}
	if r.Pattern.anchored {
		m |= metaAnchored
	}
	if r.Pattern.wild {
		m |= metaWild
	}
	return m
}

// pattern returns the pattern of rule i.
func (s *Set) pattern(i int32) Pattern {
	m := s.meta[i]
	return Pattern{norm: s.norms[i], prefix: int32(m & metaPrefix), anchored: m&metaAnchored != 0, wild: m&metaWild != 0}
}

// NewSet builds a Set over rules. The indexes Lookup returns refer to this
// slice; the Set keeps a copy of what it needs, so rules may be reused.
func NewSet(rules []Rule) *Set {
	s := &Set{norms: make([]string, len(rules)), meta: make([]uint32, len(rules))}
	for i, r := range rules {
		s.norms[i], s.meta[i] = r.Pattern.norm, packRule(r)
	}
	lit := make([]keyed, 0, len(rules))
	var wild []keyed
	maxLen := 0
	for i, r := range rules {
		p := r.Pattern
		if p.prefix <= 1 {
			if run := p.firstRun(); run != "" {
				wild = append(wild, keyed{run, int32(i)})
				maxLen = max(maxLen, p.Len())
				continue
			}
		}
		lit = append(lit, keyed{p.literalPrefix(), int32(i)})
	}
	// A large set keeps its keys next to each other: found through their
	// rules, each step of a search would be three loads from far apart.
	s.lit.build(s, lit, len(lit) > keepKeys)
	if len(wild) > 0 {
		w := &wildIndex{maxLen: maxLen}
		w.build(s, wild, true)
		if len(w.kept.keys) > groupedRuns {
			w.filter = newRunFilter(w.kept.keys)
		} else {
			w.groupRuns()
		}
		s.wild = w
	}
	return s
}

type keyed struct {
	key  string
	rule int32
}

// build sorts the rules by key, best first within a key, and links every
// distinct key to its parent. keep keeps the keys; without it a key is
// found again as the literal prefix of its first rule.
func (x *index) build(s *Set, ks []keyed, keep bool) {
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		switch {
		case a.rule == b.rule:
			return 0
		case s.better(a.rule, b.rule):
			return -1
		}
		return 1
	})
	distinct := 0
	for i := range ks {
		if i == 0 || ks[i].key != ks[i-1].key {
			distinct++
		}
	}
	// A large set compares two words per key instead of its head.
	large := keep && distinct > keepKeys
	x.order = make([]int32, len(ks))
	x.nodes = make([]node, 0, distinct+1)
	if !large {
		x.heads = make([]uint64, 0, distinct)
	}
	if keep {
		x.kept = &keptKeys{keys: make([]string, 0, distinct)}
	}
	var stack []int32 // nodes whose keys prefix the current key, shortest first
	var keys []string // the key of each node on the stack
	for i, k := range ks {
		x.order[i] = k.rule
		if i > 0 && k.key == ks[i-1].key {
			continue
		}
		for len(stack) > 0 && !strings.HasPrefix(k.key, keys[len(keys)-1]) {
			stack, keys = stack[:len(stack)-1], keys[:len(keys)-1]
		}
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack, keys = append(stack, int32(len(x.nodes))), append(keys, k.key)
		x.nodes = append(x.nodes, node{start: int32(i), parent: parent})
		if !large {
			x.heads = append(x.heads, wordAt(k.key, 0))
		}
		if keep {
			x.kept.keys = append(x.kept.keys, k.key)
		}
	}
	x.nodes = append(x.nodes, node{start: int32(len(ks)), parent: -1})
	if large {
		slash := new([257]int32)
		for c := range 256 {
			i, _ := slices.BinarySearch(x.kept.keys, "/"+string([]byte{byte(c)}))
			slash[c] = int32(i)
		}
		// "0" follows "/" and so every key starting with it.
		i, _ := slices.BinarySearch(x.kept.keys, "0")
		slash[256] = int32(i)
		x.kept.slash = slash
		x.kept.words = make([]uint64, 2*len(x.kept.keys))
		for k, key := range x.kept.keys {
			x.kept.words[2*k], x.kept.words[2*k+1] = wordAt(key, 2), wordAt(key, 10)
		}
	}
}

func (s *Set) key(x *index, k int) string {
	if x.kept != nil {
		return x.kept.keys[k]
	}
	i := x.order[x.nodes[k].start]
	return s.norms[i][:s.meta[i]&metaPrefix]
}

// Len returns the number of rules in the set.
func (s *Set) Len() int { return len(s.norms) }

// Rule returns the i'th rule given to NewSet.
func (s *Set) Rule(i int) Rule {
	return Rule{Pattern: s.pattern(int32(i)), Allow: s.meta[i]&metaAllow != 0}
}

// better reports whether rule a takes precedence over rule b.
func (s *Set) better(a, b int32) bool {
	la, lb := len(s.norms[a]), len(s.norms[b])
	if la != lb {
		return la > lb
	}
	if aa, ab := s.meta[a]&metaAllow, s.meta[b]&metaAllow; aa != ab {
		return aa != 0
	}
	return a < b
}

// Lookup returns the index of the rule that decides the normalised path
// (see AppendPath), or -1 when no rule matches.
func (s *Set) Lookup(path []byte) int {
	p := pathString(path)
	best := s.visit(&s.lit, p, -1)
	w := s.wild
	if w == nil || best >= 0 && len(s.norms[best]) > w.maxLen {
		return int(best)
	}
	if w.filter == nil {
		return int(s.lookupGrouped(w, p, best))
	}
	// Many runs: at each position of the path whose octets start some
	// run, find the runs starting there. A run found again further on
	// would only test the same rules against the same path, so the last
	// few nodes tried are remembered and skipped, which keeps a path that
	// repeats one run ("/aaaa…") from testing its rules at every position.
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
	return int(best)
}

// keepKeys is the number of literal-prefix rules above which a Set keeps
// their prefixes in an array of their own, which costs two words per
// distinct prefix and saves loads on a search among many.
const keepKeys = 256

// greatest returns the node of the greatest key not after at, or -1.
func (x *index) greatest(s *Set, at string) int32 {
	lo, hi := 0, len(x.nodes)-1
	if x.kept != nil && x.kept.slash != nil && len(at) >= 2 && at[0] == '/' {
		// Keys before the range are before at, and those after it are
		// after at. All of them share at's first two octets.
		lo, hi = int(x.kept.slash[at[1]]), int(x.kept.slash[int(at[1])+1])
		a, b := wordAt(at, 2), wordAt(at, 10)
		return x.kept.greatest(lo, hi, a, b, at)
	}
	if x.heads == nil {
		// A set with words keeps its keys, and at is too short for them.
		i, found := slices.BinarySearch(x.kept.keys, at)
		if found {
			return int32(i)
		}
		return int32(i - 1)
	}
	h := wordAt(at, 0)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		// Paths and keys hold no zero octet (normalising escapes it), so
		// heads ordered so are ordered as the strings are, and equal heads
		// need the strings themselves.
		if hm := x.heads[m]; hm < h || hm == h && s.key(x, m) <= at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return int32(lo - 1)
}

// try tests, best first, the rules of node k of x against path, and
// returns the better of best and the first of them that matches.
func (s *Set) try(x *index, k int32, path string, best int32) int32 {
	for _, r := range x.order[x.nodes[k].start:x.nodes[k+1].start] {
		if best >= 0 && !s.better(r, best) {
			// Rules are sorted best first: none after r can win either.
			break
		}
		if s.pattern(r).match(path) {
			return r
		}
	}
	return best
}

// visit tries the rules of every key of x that is a prefix of path, and
// returns the best of them that matches, or best if none is better.
func (s *Set) visit(x *index, path string, best int32) int32 {
	for k := x.greatest(s, path); k >= 0; k = x.nodes[k].parent {
		if strings.HasPrefix(path, s.key(x, int(k))) {
			best = s.try(x, k, path, best)
		}
	}
	return best
}
