package policy

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/robots/internal/norm"
	"github.com/crawlkit/robots/match"
)

// selection is the merged rule set of every group naming one token. A
// crawler's first decisions on it are each a pass over its rules, which
// costs less than an index until the selection has been decided
// indexAfter times; the next decision builds the index. Most groups of
// most files name crawlers other than the one asking, and most files are
// decided a few times, so most are never indexed.
type selection struct {
	owner  *Robots
	groups []int
	delay  time.Duration // the largest Crawl-delay of groups, or negative without one
	// allowsAll reports that the groups hold no Disallow: every path is
	// allowed, whatever its form, as "Disallow:" alone or no rule at all
	// says, so a decision needs neither the path normalised nor its
	// other forms.
	allowsAll bool

	// decided counts the decisions made without an index, up to
	// indexAfter.
	decided atomic.Int32
	// idx is nil until the decision that builds it. Goroutines that build
	// it at the same time each build an index and the first to store its
	// own wins, so a decision takes no lock, before or after the build.
	idx atomic.Pointer[ruleIndex]
}

// indexAfter is how many decisions a selection makes by a pass over its
// rules before one builds its index. Building the index of n rules costs
// tens of passes (both grow with n; about 80 on the corpus's largest
// group, 31,843 rules), and a pass gives the same answer, so a file
// decided a few times is never indexed, and one decided often pays the
// build back within a hundred decisions; a group is passed over at most
// indexAfter times.
const indexAfter = 16

// ruleIndex is the rule set of a selection, built by selection.index.
type ruleIndex struct {
	set *match.Set
	// rules holds, for each rule of set, its index in Robots.rules; with
	// one group, which needs no list, rule i of set is rule first+i.
	rules []int32
	first int
}

// rule returns the index in Robots.rules of rule i of the set.
func (x *ruleIndex) rule(i int) int {
	if x.rules == nil {
		return x.first + i
	}
	return int(x.rules[i])
}

// agentEntry names the selection of one lower-cased product token.
type agentEntry struct {
	// head is octets 0 to 7 of token, big-endian, zero past its end:
	// tokens hold no zero octet, so most steps of a search compare two
	// integers rather than two strings.
	head  uint64
	token string
	sel   *selection
}

// decide returns the index in Robots.rules of the rule that decides the
// normalised path, or -1 when none matches: by the index once there is
// one, by a pass over the rules until the decision that builds it.
func (s *selection) decide(path []byte) int {
	if x := s.idx.Load(); x != nil {
		return x.lookup(path)
	}
	if s.decided.Load() < indexAfter && s.decided.Add(1) <= indexAfter {
		return s.scan(path)
	}
	return s.index().lookup(path)
}

// lookup returns the index in Robots.rules of the rule of x that decides
// path, or -1.
func (x *ruleIndex) lookup(path []byte) int {
	if i := x.set.Lookup(path); i >= 0 {
		return x.rule(i)
	}
	return -1
}

// scan decides the normalised path as the index does, by trying every
// rule: rules are taken in the index's order (group by group, each in
// file order), and one replaces the best so far only when it takes
// precedence over it by the index's measure (a longer pattern, or an
// Allow as long as a Disallow), so that both pick the same rule.
func (s *selection) scan(path []byte) int {
	r := s.owner
	best, bestLen, bestAllow := -1, -1, false
	for _, gi := range s.groups {
		lo, hi := r.groupRules(gi)
		norm := r.firstNorm(lo)
		start := uint32(0)
		if lo > 0 {
			start = r.rules[lo-1].end
		}
		for i := lo; i < hi; i++ {
			x := r.rules[i]
			pattern := r.text[start:x.end]
			start = x.end
			if norm < len(r.norms) && int(r.norms[norm].rule) == i {
				pattern = r.norms[norm].norm
				norm++
			}
			allow := x.line&ruleAllow != 0
			if len(pattern) < bestLen || len(pattern) == bestLen && (bestAllow || !allow) {
				continue
			}
			if matches(pattern, path) {
				best, bestLen, bestAllow = i, len(pattern), allow
			}
		}
	}
	return best
}

// matches reports whether the normalised path matches the normalised
// pattern, as its match.Pattern does. Most rules of a group differ from
// a path before their first wildcard, which tells the answer without
// compiling the pattern: a normalised path holds no "*" or "$", and a
// normalised pattern holds "$" only at its end.
func matches(pattern string, path []byte) bool {
	i := 0
	for i < len(pattern) && i < len(path) && pattern[i] == path[i] {
		i++
	}
	switch {
	case i == len(pattern):
		return true
	case pattern[i] == '*':
		return match.CompileNormalized(pattern).Match(path)
	case pattern[i] == '$':
		return i == len(path)
	}
	return false
}

// index returns the selection's rule set, building it on first use.
func (s *selection) index() *ruleIndex {
	if x := s.idx.Load(); x != nil {
		return x
	}
	x := s.build()
	if s.idx.CompareAndSwap(nil, x) {
		return x
	}
	return s.idx.Load()
}

func (s *selection) build() *ruleIndex {
	r, x := s.owner, &ruleIndex{}
	n := 0
	for _, gi := range s.groups {
		lo, hi := r.groupRules(gi)
		n += hi - lo
	}
	if len(s.groups) == 1 {
		x.first, _ = r.groupRules(s.groups[0])
	} else {
		x.rules = make([]int32, 0, n)
		for _, gi := range s.groups {
			lo, hi := r.groupRules(gi)
			for i := lo; i < hi; i++ {
				x.rules = append(x.rules, int32(i))
			}
		}
	}
	compiled := make([]match.Rule, n)
	for i := range compiled {
		ri := x.rule(i)
		start := uint32(0)
		if ri > 0 {
			start = r.rules[ri-1].end
		}
		rule := r.rules[ri]
		pattern := r.text[start:rule.end]
		if k := r.firstNorm(ri); k < len(r.norms) && int(r.norms[k].rule) == ri {
			pattern = r.norms[k].norm
		}
		compiled[i] = match.Rule{Pattern: match.CompileNormalized(pattern), Allow: rule.line&ruleAllow != 0}
	}
	x.set = match.NewSet(compiled)
	return x
}

// named is one product token of a group, while Robots.buildTokens sorts
// them.
type named struct {
	token     string
	off, n    int // where the lower-cased token is in lowered
	group     int
	lowercase bool // token needs no lower-casing
}

// indexScratch is the working space of Robots.buildTokens, kept in
// scratches from file to file: none of it is part of the result.
type indexScratch struct {
	pairs   []named
	lowered []byte
	lists   [][]int // the groups of selection i
	single  []int32 // per group, the selection of it alone, or -1
	entries []int32 // per distinct token, its selection
	tokens  []string
}

var scratches = sync.Pool{New: func() any { return new(indexScratch) }}

// reset empties sc for a file of groups groups, dropping what it points
// to so that the pool holds no file's strings.
func (sc *indexScratch) reset(groups int) {
	clear(sc.pairs)
	clear(sc.lists)
	clear(sc.tokens)
	sc.pairs, sc.lowered, sc.lists = sc.pairs[:0], sc.lowered[:0], sc.lists[:0]
	sc.entries, sc.tokens = sc.entries[:0], sc.tokens[:0]
	sc.single = slices.Grow(sc.single[:0], groups)[:groups]
	for i := range sc.single {
		sc.single[i] = -1
	}
}

// buildTokens merges, for every product token, the groups that name it
// (RFC 9309 section 2.2.1) into one selection per distinct set of groups.
// A token is lower-cased in one buffer shared by all of them, and a token
// naming one group, the common case, shares its group list with the other
// tokens.
func (r *Robots) buildTokens() *tokenIndex {
	x := &tokenIndex{}
	sc := scratches.Get().(*indexScratch)
	sc.reset(len(r.groups))
	defer func() {
		sc.reset(0)
		scratches.Put(sc)
	}()
	var star []int
	pairs, lowered := sc.pairs, sc.lowered
	for i := range r.groups {
		lo, hi := r.groupAgents(i)
		for k := lo; k < hi; k++ {
			a := r.agent(k)
			switch {
			case a == "*":
				if len(star) == 0 || star[len(star)-1] != i {
					star = append(star, i)
				}
			case a == "" || ProductToken(a) != a:
				// A value without a product token names no crawler.
			case !hasUpper(a):
				pairs = append(pairs, named{token: a, group: i, lowercase: true})
			default:
				pairs = append(pairs, named{off: len(lowered), n: len(a), group: i})
				lowered = norm.AppendLower(lowered, a)
			}
		}
	}
	sc.pairs, sc.lowered = pairs, lowered
	if len(lowered) > 0 {
		all := string(lowered)
		for k := range pairs {
			if !pairs[k].lowercase {
				pairs[k].token = all[pairs[k].off : pairs[k].off+pairs[k].n]
			}
		}
	}
	slices.SortFunc(pairs, func(a, b named) int {
		if c := strings.Compare(a.token, b.token); c != 0 {
			return c
		}
		return a.group - b.group
	})
	pairs = slices.CompactFunc(pairs, func(a, b named) bool { return a.token == b.token && a.group == b.group })

	// First give every distinct list of groups a selection number, then
	// make the selections in one slice of exactly that many.
	var ids []int // group numbers 0..n-1, shared by single-group lists
	lists, single, entries, tokens := sc.lists, sc.single, sc.entries, sc.tokens
	singleOf := func(gi int) int32 {
		if single[gi] < 0 {
			if ids == nil {
				ids = make([]int, len(r.groups))
				for i := range ids {
					ids[i] = i
				}
			}
			single[gi] = int32(len(lists))
			lists = append(lists, ids[gi:gi+1:gi+1])
		}
		return single[gi]
	}
	selectionOf := func(groups []int) int32 {
		if len(groups) == 1 {
			return singleOf(groups[0])
		}
		for i, l := range lists {
			if slices.Equal(l, groups) {
				return int32(i)
			}
		}
		lists = append(lists, groups)
		return int32(len(lists) - 1)
	}
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j].token == pairs[i].token {
			j++
		}
		tokens = append(tokens, pairs[i].token)
		if j-i == 1 {
			entries = append(entries, singleOf(pairs[i].group))
		} else {
			groups := make([]int, j-i)
			for k := range groups {
				groups[k] = pairs[i+k].group
			}
			entries = append(entries, selectionOf(groups))
		}
		i = j
	}
	defer func() { sc.lists, sc.entries, sc.tokens = lists, entries, tokens }()
	starSel := int32(-1)
	if star != nil {
		starSel = selectionOf(star)
	}
	if len(lists) == 0 {
		return x
	}
	sels := make([]selection, len(lists))
	for i, groups := range lists {
		sels[i].init(r, groups)
	}
	if len(tokens) > 0 {
		x.agents = make([]agentEntry, len(tokens))
		for i, t := range tokens {
			x.agents[i] = agentEntry{head: head(t), token: t, sel: &sels[entries[i]]}
		}
	}
	if starSel >= 0 {
		x.star = &sels[starSel]
	}
	return x
}

// hasUpper reports whether s holds an upper-case ASCII letter.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// tokenIndex is the groups of a file by product token, built by
// Robots.buildTokens.
type tokenIndex struct {
	agents []agentEntry // by lower-cased product token, sorted
	star   *selection   // the merged "*" groups, or nil
	// first is the answer to the first lookup of one token made by the
	// index: a crawler asks for its own token on every Robots.Allowed,
	// and comparing it costs a fraction of lowering and searching it.
	first atomic.Pointer[firstLookup]
}

// firstLookup is a token as asked and what lookup answered for it.
type firstLookup struct {
	asked, token string
	sel          *selection
}

// scanLookups is how many lookups pass over a file's User-agent lines
// before one builds its token index. Sorting the tokens costs as much as
// many passes, and a crawler looks its groups up once per file it holds
// (it keeps the Agent), so most files are never indexed.
const scanLookups = 4

// lookup returns the selection for the first token that has a group, or
// the "*" groups, with the token that chose it ("*" for the fallback): by
// a pass over the User-agent lines until the lookup that builds the
// index.
func (r *Robots) lookup(tokens []string) (*selection, string) {
	if r == nil {
		return nil, ""
	}
	x := r.tokens.Load()
	if x == nil {
		if r.lookups.Load() < scanLookups && r.lookups.Add(1) <= scanLookups {
			return r.scan(tokens)
		}
		x = r.tokenIndex()
	}
	if len(tokens) != 1 {
		return x.lookup(tokens)
	}
	if f := x.first.Load(); f != nil && f.asked == tokens[0] {
		return f.sel, f.token
	}
	sel, token := x.lookup(tokens)
	if x.first.Load() == nil {
		// Once per file: the only allocation a lookup by the index makes.
		x.first.CompareAndSwap(nil, &firstLookup{asked: tokens[0], token: token, sel: sel})
	}
	return sel, token
}

// lookup is Robots.lookup by the index.
func (x *tokenIndex) lookup(tokens []string) (*selection, string) {
	for _, t := range tokens {
		if t == "*" || len(x.agents) == 0 {
			// Many files name no crawler but "*": nothing to look up.
			break
		}
		if s := x.named(t); s != nil {
			return s, t
		}
	}
	if x.star == nil {
		return nil, ""
	}
	return x.star, "*"
}

// tokenIndex returns r's token index, building it on first use.
func (r *Robots) tokenIndex() *tokenIndex {
	if x := r.tokens.Load(); x != nil {
		return x
	}
	x := r.buildTokens()
	if r.tokens.CompareAndSwap(nil, x) {
		return x
	}
	return r.tokens.Load()
}

// scan is lookup by a pass over the User-agent lines: the groups of the
// first token some product token of a group equals, case-insensitively,
// else the "*" groups, merged into a selection of their own.
func (r *Robots) scan(tokens []string) (*selection, string) {
	for _, t := range tokens {
		if t == "*" {
			break
		}
		if t == "" {
			continue
		}
		if groups := r.naming(t); groups != nil {
			return r.selectionOf(groups), t
		}
	}
	if groups := r.naming("*"); groups != nil {
		return r.selectionOf(groups), "*"
	}
	return nil, ""
}

// naming returns the groups, in file order, with a User-agent line whose
// value is "*", for token "*", or else a product token equal to token in
// any case; nil when none does. token is not empty.
func (r *Robots) naming(token string) []int {
	var groups []int
	for gi := range r.groups {
		lo, hi := r.groupAgents(gi)
		for k := lo; k < hi; k++ {
			a := r.agent(k)
			if len(a) != len(token) {
				continue
			}
			if token == "*" && a == "*" || token != "*" && norm.EqualFold(a, token) && ProductToken(a) == a {
				groups = append(groups, gi)
				break
			}
		}
	}
	return groups
}

// selectionOf returns a selection of groups.
func (r *Robots) selectionOf(groups []int) *selection {
	s := &selection{}
	s.init(r, groups)
	return s
}

// init makes s the selection of r's groups: their rules merged, their
// largest Crawl-delay, and whether they hold a Disallow.
func (s *selection) init(r *Robots, groups []int) {
	s.owner, s.groups, s.delay, s.allowsAll = r, groups, -1, true
	for _, gi := range groups {
		s.delay = max(s.delay, r.groups[gi].delay)
		s.allowsAll = s.allowsAll && !r.groups[gi].disallows
	}
}

// named returns the selection of token, in any case, or nil.
func (x *tokenIndex) named(token string) *selection {
	// The tokens of agents are lower-cased; so is a copy of token, on the
	// stack unless it is longer than any real crawler's.
	var buf [maxToken]byte
	lower := norm.AppendLower(buf[:0], token)
	// buf holds the token's first octets, and zeros past its end: its
	// head is buf's first word.
	h := binary.BigEndian.Uint64(buf[:])
	lo, hi := 0, len(x.agents)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if e := &x.agents[m]; e.head < h || e.head == h && e.token < string(lower) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(x.agents) && x.agents[lo].token == string(lower) {
		return x.agents[lo].sel
	}
	return nil
}

// maxToken is the length of the longest token that named lowers on the
// stack.
const maxToken = 64

// head returns octets 0 to 7 of s, big-endian, zero past its end.
func head[S ~string | ~[]byte](s S) uint64 {
	var h uint64
	for i := range 8 {
		h <<= 8
		if i < len(s) {
			h |= uint64(s[i])
		}
	}
	return h
}
