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
	return int(s.lookupFiltered(w, p, best))
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
