package match

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// refMatch is a deliberately simple reference matcher: dynamic
// programming over a normalised pattern and path, written from RFC 9309
// section 2.2.3 without any of the fast matcher's shortcuts.
func refMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// ok[j] reports whether pattern[:i] matches path[:j].
	ok := make([]bool, len(path)+1)
	ok[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(path)+1)
		for j := 0; j <= len(path); j++ {
			if pattern[i] == '*' {
				next[j] = ok[j] || j > 0 && next[j-1]
			} else {
				next[j] = j > 0 && ok[j-1] && path[j-1] == pattern[i]
			}
		}
		ok = next
	}
	if anchored {
		return ok[len(path)]
	}
	for _, m := range ok {
		if m {
			return true
		}
	}
	return false
}

// refLookup picks the deciding rule by scanning every rule.
func refLookup(rules []Rule, path string) int {
	best := -1
	for i, r := range rules {
		if !refMatch(r.Pattern.String(), path) {
			continue
		}
		if best < 0 || r.Pattern.Len() > rules[best].Pattern.Len() ||
			r.Pattern.Len() == rules[best].Pattern.Len() && r.Allow && !rules[best].Allow {
			best = i
		}
	}
	return best
}

// FuzzMatch checks that the fast matcher agrees with the reference on
// arbitrary patterns and paths.
func FuzzMatch(f *testing.F) {
	seeds := [][2]string{
		{"/fish", "/fish.html"},
		{"/*.php$", "/a.php"},
		{"/a*b*c$", "/aXbYc"},
		{"*m", "/foo.htm"},
		{"/x*aba$", "/xababa"},
		{"/*a*a*a*a*a*a*a*a*a*a*a*b", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"},
		{"/caf%C3%A9", "/café"},
		{"/%2a$", "/*"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		p, err := Compile(pattern)
		if err != nil {
			return
		}
		norm := AppendPath(nil, path)
		if got, want := p.Match(norm), refMatch(p.String(), string(norm)); got != want {
			t.Errorf("pattern %q (normalised %q), path %q (normalised %q): Match = %v, reference = %v",
				pattern, p.String(), path, norm, got, want)
		}
	})
}

// FuzzLookup checks that the indexed rule set picks the same rule as a
// scan of every rule. The rules are the lines of the first argument, each
// starting with "+" for allow or "-" for disallow.
func FuzzLookup(f *testing.F) {
	f.Add("-/\n+/p\n-/*.htm", "/page.htm")
	f.Add("-/folder\n+/folder", "/folder/x")
	f.Add("-/ab\n+/abc\n-/abcd\n+/a\n-*d", "/abcd")
	f.Add("+/$\n-/", "/")
	f.Add("-/*a\n-*ab\n+/*b*c$\n-*x\n+/*\n-*abc*", "/zabc")
	f.Add("-/*.php\n+/x*.php$\n-*p\n-/**ph*p$", "/x.php")
	f.Add("-/*%2A\n+*%24\n-/*ü", "/a*b$c%C3%BC")
	// More wildcard-first runs than a lookup looks for one by one.
	f.Add("-*a\n+/*ab\n-*b*c\n+*abc$\n-/*bc\n+*c\n-*x\n+/*y\n-*z?\n+*ca\n-/*a*$", "/cabcab")
	f.Fuzz(func(t *testing.T, lines, path string) {
		var rules []Rule
		for _, line := range strings.Split(lines, "\n") {
			if len(line) < 2 || line[0] != '+' && line[0] != '-' {
				continue
			}
			p, err := Compile(line[1:])
			if err != nil {
				continue
			}
			rules = append(rules, Rule{Pattern: p, Allow: line[0] == '+'})
		}
		norm := AppendPath(nil, path)
		got := NewSet(rules).Lookup(norm)
		want := refLookup(rules, string(norm))
		// Rules of the same kind and length rank equally; which of them is
		// reported does not change the decision.
		same := got == want || got >= 0 && want >= 0 &&
			rules[got].Allow == rules[want].Allow &&
			rules[got].Pattern.Len() == rules[want].Pattern.Len() &&
			refMatch(rules[got].Pattern.String(), string(norm))
		if !same {
			t.Errorf("rules %q, path %q: Lookup = %d, reference = %d", lines, path, got, want)
		}
	})
}

// refPath normalises one octet at a time, straight from the rules that
// AppendPath documents.
func refPath(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := unhex(s[i+1])
			w, _ := unhex(s[i+2])
			c = v<<4 | w
			i += 2
			if unreserved(c) {
				b.WriteByte(c)
				continue
			}
		} else if c != '%' && c > ' ' && c < 0x7f && c != '*' && c != '$' && !strings.ContainsRune("\"<>\\^`{|}", rune(c)) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

func isHex(c byte) bool { _, ok := unhex(c); return ok }

// FuzzAppendPath checks the fast normaliser against the reference.
func FuzzAppendPath(f *testing.F) {
	for _, s := range []string{"/a b", "/caf%c3%a9", "/%7e%2F%zz%", "/x*$#frag", "", "#", "/ü?q=%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendPath([]byte("x"), s)[1:]), refPath(s); got != want {
			t.Errorf("AppendPath(%q) = %q, reference %q", s, got, want)
		}
	})
}

// TestLookupManyRules compares, with a scan of every rule, a set large
// enough to keep its keys and narrow its search by the octet after "/".
func TestLookupManyRules(t *testing.T) {
	var rules []Rule
	for i := range 3 * keepKeys {
		pattern := fmt.Sprintf("/%c%d/", 'a'+i%7, i)
		switch i % 5 {
		case 1:
			pattern = fmt.Sprintf("/%c", 'a'+i%7)
		case 2:
			pattern = fmt.Sprintf("/*%d$", i)
		case 3:
			pattern = "/"
		}
		p, err := Compile(pattern)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, Rule{Pattern: p, Allow: i%3 == 0})
	}
	s := NewSet(rules)
	if s.lit.kept == nil || s.lit.kept.slash == nil {
		t.Fatal("the set does not narrow its search")
	}
	for _, path := range []string{"/", "/a", "/a0/", "/b7/x", "/g699/", "/z", "/%FF", "/a/x17", "/c12/d", "/~"} {
		norm := AppendPath(nil, path)
		got, want := s.Lookup(norm), refLookup(rules, string(norm))
		if got != want && (got < 0 || want < 0 || rules[got].Allow != rules[want].Allow || rules[got].Pattern.Len() != rules[want].Pattern.Len()) {
			t.Errorf("path %q: Lookup = %d, a scan gives %d", path, got, want)
		}
	}
}

// TestLookupManyRulesLongKeys compares, with a scan of every rule, a large
// set whose keys share long prefixes and end before, within and after the
// octets a search compares as words, on random paths.
func TestLookupManyRulesLongKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "/ab.9"
	word := func(n int) string {
		b := []byte("/a")
		for range n {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		return string(b)
	}
	var rules []Rule
	for i := range 4 * keepKeys {
		pattern := word(rng.IntN(24))
		if i%9 == 0 {
			pattern += "$"
		}
		p, err := Compile(pattern)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, Rule{Pattern: p, Allow: rng.IntN(2) == 0})
	}
	s := NewSet(rules)
	if s.lit.kept == nil || s.lit.kept.words == nil {
		t.Fatal("the set does not compare words")
	}
	for range 1500 {
		path := word(rng.IntN(30))
		if rng.IntN(4) == 0 {
			r := rules[rng.IntN(len(rules))].Pattern.norm
			path = strings.TrimSuffix(r, "$") + word(rng.IntN(4))[2:]
		}
		norm := AppendPath(nil, path)
		got, want := s.Lookup(norm), refLookup(rules, string(norm))
		if got != want && (got < 0 || want < 0 || rules[got].Allow != rules[want].Allow || rules[got].Pattern.Len() != rules[want].Pattern.Len()) {
			t.Fatalf("path %q: Lookup = %d, a scan gives %d", path, got, want)
		}
	}
}

// TestLookupGroupedRuns compares, with a scan of every rule, sets of
// wildcard-first rules on both sides of groupedRuns, on random paths:
// runs that share octets, that prefix one another, that hold the octet
// they are found by more than once or far from their start, and a path
// holding a run more than once.
func TestLookupGroupedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "/ab.=?x"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for _, n := range []int{1, 2, 9, groupedRuns - 1, groupedRuns, groupedRuns + 1} {
		var rules []Rule
		runs := map[string]bool{}
		for len(runs) < n {
			run := word(1 + rng.IntN(6))
			if len(runs)%7 == 3 {
				run = strings.Repeat("a", 300) + run // found far from its start
			}
			if runs[run] {
				continue
			}
			runs[run] = true
			pattern := "/*" + run
			if run[0] == '/' && rng.IntN(2) == 0 {
				pattern = "*" + run // found at the path's first octet
			}
			if rng.IntN(3) == 0 {
				pattern += "*" + word(1+rng.IntN(2))
			}
			if rng.IntN(4) == 0 {
				pattern += "$"
			}
			p, err := Compile(pattern)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, Rule{Pattern: p, Allow: rng.IntN(2) == 0})
		}
		for _, lit := range []string{"/", "/a", "/ab/"} {
			p, _ := Compile(lit)
			rules = append(rules, Rule{Pattern: p, Allow: rng.IntN(2) == 0})
		}
		s := NewSet(rules)
		if grouped := s.wild.filter == nil; grouped != (n <= groupedRuns) {
			t.Fatalf("%d runs: grouped %v", n, grouped)
		}
		for range 3000 {
			path := "/" + word(rng.IntN(20))
			if rng.IntN(2) == 0 {
				r := strings.TrimSuffix(rules[rng.IntN(n)].Pattern.norm, "$")
				r = strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(r, "/"), "*"), "*", word(1))
				path += word(rng.IntN(3)) + r + word(rng.IntN(3)) + r
				if r[0] == '/' && rng.IntN(2) == 0 {
					path = r
				}
			}
			norm := AppendPath(nil, path)
			got, want := s.Lookup(norm), refLookup(rules, string(norm))
			if got != want && (got < 0 || want < 0 || rules[got].Allow != rules[want].Allow || rules[got].Pattern.Len() != rules[want].Pattern.Len()) {
				t.Fatalf("%d runs, path %q: Lookup = %d (%q), a scan gives %d (%q)", n, path, got, rules[max(got, 0)].Pattern.norm, want, rules[max(want, 0)].Pattern.norm)
			}
		}
	}
}
