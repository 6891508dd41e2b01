package match

import (
	"bytes"
	"slices"
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
// Rules are indexed by their literal prefix in a radix tree, so a lookup
// only tries the rules whose prefix the path starts with, however many
// rules the set holds.
type Set struct {
	rules []Rule
	root  node
}

// node is a radix tree node. The path from the root spells a literal
// prefix; rules lists the rules with exactly that prefix, best first.
type node struct {
	label    string
	firsts   []byte // first byte of each child's label, for a fast scan
	children []*node
	rules    []int32
}

// NewSet builds a Set over rules. The indexes Lookup returns refer to this
// slice, which the Set keeps and must not be changed afterwards.
func NewSet(rules []Rule) *Set {
	s := &Set{rules: rules}
	for i := range rules {
		s.root.insert(rules[i].Pattern.literalPrefix(), int32(i))
	}
	s.root.sortRules(rules)
	return s
}

// Len returns the number of rules in the set.
func (s *Set) Len() int { return len(s.rules) }

// Rule returns the i'th rule given to NewSet.
func (s *Set) Rule(i int) Rule { return s.rules[i] }

// better reports whether rule a takes precedence over rule b.
func better(rules []Rule, a, b int32) bool {
	la, lb := rules[a].Pattern.Len(), rules[b].Pattern.Len()
	if la != lb {
		return la > lb
	}
	if rules[a].Allow != rules[b].Allow {
		return rules[a].Allow
	}
	return a < b
}

func (n *node) insert(key string, idx int32) {
	for {
		if key == "" {
			n.rules = append(n.rules, idx)
			return
		}
		ci := bytes.IndexByte(n.firsts, key[0])
		if ci < 0 {
			n.firsts = append(n.firsts, key[0])
			n.children = append(n.children, &node{label: key, rules: []int32{idx}})
			return
		}
		child := n.children[ci]
		common := commonPrefix(key, child.label)
		if common < len(child.label) {
			// Split the edge so that the shared part becomes its own node.
			split := &node{
				label:    child.label[:common],
				firsts:   []byte{child.label[common]},
				children: []*node{child},
			}
			child.label = child.label[common:]
			n.children[ci] = split
			child = split
		}
		n, key = child, key[common:]
	}
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (n *node) sortRules(rules []Rule) {
	if len(n.rules) > 1 {
		slices.SortFunc(n.rules, func(a, b int32) int {
			switch {
			case a == b:
				return 0
			case better(rules, a, b):
				return -1
			}
			return 1
		})
	}
	for _, c := range n.children {
		c.sortRules(rules)
	}
}

// Lookup returns the index of the rule that decides the normalised path
// (see AppendPath), or -1 when no rule matches.
func (s *Set) Lookup(path []byte) int {
	best := int32(-1)
	n := &s.root
	rest := path
	for {
		for _, r := range n.rules {
			if best >= 0 && !better(s.rules, r, best) {
				// Rules are sorted best first: none after r can win either.
				break
			}
			if s.rules[r].Pattern.Match(path) {
				best = r
				break
			}
		}
		if len(rest) == 0 {
			break
		}
		ci := bytes.IndexByte(n.firsts, rest[0])
		if ci < 0 {
			break
		}
		n = n.children[ci]
		if len(rest) < len(n.label) || string(rest[:len(n.label)]) != n.label {
			break
		}
		rest = rest[len(n.label):]
	}
	return int(best)
}
