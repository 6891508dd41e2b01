package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots/match"
)

const selectionFile = `User-agent: OtherBot
Disallow: /

User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$
Disallow: *?sort=
`

// TestIndexBuiltAfterDecisions checks that a group's rule index is built
// neither by Parse nor by a crawler's first indexAfter decisions, which
// pass over its rules, but by the next one, and never for a group that
// does not apply.
func TestIndexBuiltAfterDecisions(t *testing.T) {
	r := Parse([]byte(selectionFile))
	agent := r.Agent("ExampleBot")
	star, other := agent.sel, r.Agent("OtherBot").sel
	if star == nil || other == nil || star == other {
		t.Fatalf("selections %p and %p, want two", star, other)
	}
	if star.idx.Load() != nil || other.idx.Load() != nil {
		t.Fatal("Parse built a rule index")
	}
	for k := range indexAfter {
		agent.Allowed("/x")
		if star.idx.Load() != nil {
			t.Fatalf("decision %d of %d built the index", k+1, indexAfter)
		}
	}
	agent.Decide("/private/x")
	if star.idx.Load() == nil {
		t.Errorf("decision %d did not build its group's index", indexAfter+1)
	}
	if other.idx.Load() != nil {
		t.Error("a decision built the index of a group that does not apply")
	}
}

// TestIndexConcurrentFirstUse has many goroutines make the first
// decisions on one parsed file at once, more of them than a selection
// passes over its rules before one builds its index; run with -race, it
// checks that counting those decisions and building the index need no
// lock, and that every goroutine gets the answers of a file decided one
// path at a time.
func TestIndexConcurrentFirstUse(t *testing.T) {
	paths := []string{"/private/x", "/private/open/y", "/a.pdf", "/a.pdf?x", "/list?sort=up", "/"}
	serial := Parse([]byte(selectionFile))
	want := make([]bool, len(paths))
	for i, p := range paths {
		want[i] = serial.Allowed(p, "ExampleBot")
	}
	r := Parse([]byte(selectionFile))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range paths {
				i := (g + k) % len(paths)
				if got := r.Allowed(paths[i], "ExampleBot"); got != want[i] {
					t.Errorf("goroutine %d: Allowed(%q) = %v, want %v", g, paths[i], got, want[i])
				}
			}
		}()
	}
	wg.Wait()
	if r.Agent("ExampleBot").sel.idx.Load() == nil {
		t.Errorf("%d decisions built no index", 8*len(paths))
	}
}

// scanBudget bounds the rule tests of TestScanMatchesIndex per selection:
// a selection of many rules is held to a sample of the urls.
const scanBudget = 4_000_000

// TestScanMatchesIndex decides the urls of the corpus against every
// selection of every corpus file and of the lint and selection fixtures,
// by a pass over the rules and by the index, and requires the same rule
// of both: the pass must never change an answer, ties between patterns
// of one length included.
func TestScanMatchesIndex(t *testing.T) {
	urlData, err := os.ReadFile(filepath.Join(corpusDir, "urls.txt"))
	if err != nil {
		t.Fatal(err)
	}
	urls := strings.Fields(string(urlData))
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"selection": []byte(selectionFile), "ties": []byte(tiesFile)}
	for _, name := range names {
		if filepath.Base(name) == "urls.txt" {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(name)] = data
	}
	if len(files) < 140 {
		t.Fatalf("%d files, want the corpus", len(files))
	}
	paths := make([][]byte, len(urls))
	for i, u := range urls {
		paths[i] = match.AppendPath(nil, u)
	}
	for _, p := range []string{"/", "/a", "/a/b.pdf", "/private/open", "/x?sort=1", "/%2A"} {
		paths = append(paths, match.AppendPath(nil, p))
	}
	decided := 0
	for name, data := range files {
		r := Parse(data)
		for _, s := range r.selections() {
			n := 0
			for _, gi := range s.groups {
				lo, hi := r.groupRules(gi)
				n += hi - lo
			}
			step := max(1, n*len(paths)/scanBudget)
			x := s.index()
			for k := 0; k < len(paths); k += step {
				decided++
				if got, want := s.scan(paths[k]), x.lookup(paths[k]); got != want {
					t.Errorf("%s, groups %v, %s: pass decides by rule %d, index by rule %d", name, s.groups, paths[k], got, want)
				}
			}
		}
	}
	if decided < 1_000_000 {
		t.Errorf("%d decisions compared, want at least 1,000,000", decided)
	}
}

// tiesFile has rules of one length that only their kind or their order
// tells apart, in two groups that one crawler merges.
const tiesFile = `User-agent: TieBot
Disallow: /a
Allow: /a
Disallow: /*.pdf
Allow: /*.pdf
Disallow: /b$
Disallow: /b*

User-agent: TieBot
Allow: /c
Disallow: /c
Disallow: /a
Allow: /%62$
Disallow: /b*
`

// TestNamedTokens checks that a token is found in any case, a token longer
// than the stack buffer named lowers it in included, and that a token
// sharing a group's first eight octets is not taken for it, by the token
// index and by a pass over the User-agent lines alike.
func TestNamedTokens(t *testing.T) {
	long := strings.Repeat("LongBot", 12)
	r := Parse([]byte("User-agent: Googlebot\nDisallow: /g\n\nUser-agent: Googlebot-News\nDisallow: /n\n\nUser-agent: " + long + "\nDisallow: /l\n"))
	tests := []struct {
		token string
		group int // -1 for none
	}{
		{"Googlebot", 0},
		{"GOOGLEBOT", 0},
		{"googlebot-news", 1},
		{"Googlebo", -1},
		{"Googlebot-", -1},
		{"Googlebots", -1},
		{long, 2},
		{strings.ToLower(long), 2},
		{long + "x", -1},
	}
	for _, tt := range tests {
		var indexed []int
		if s := r.tokenIndex().named(tt.token); s != nil {
			indexed = s.groups
		}
		for way, got := range map[string][]int{"the index": indexed, "a pass": r.naming(tt.token)} {
			switch {
			case tt.group < 0 && got != nil:
				t.Errorf("%s names %q groups %v, want none", way, tt.token, got)
			case tt.group >= 0 && (len(got) != 1 || got[0] != tt.group):
				t.Errorf("%s names %q groups %v, want group %d", way, tt.token, got, tt.group)
			}
		}
	}
}

// TestTokenIndexBuiltAfterLookups checks that Parse builds no index of
// the tokens, that a file's first scanLookups lookups pass over its
// User-agent lines instead, and that the next one builds it.
func TestTokenIndexBuiltAfterLookups(t *testing.T) {
	r := Parse([]byte(selectionFile))
	if r.tokens.Load() != nil {
		t.Fatal("Parse built the token index")
	}
	for k := range scanLookups {
		if a := r.Agent("OtherBot"); a.Token() != "OtherBot" || !slices.Equal(a.Groups(), []int{0}) {
			t.Fatalf("lookup %d: token %q, groups %v, want OtherBot's group 0", k+1, a.Token(), a.Groups())
		}
		if r.tokens.Load() != nil {
			t.Fatalf("lookup %d of %d built the token index", k+1, scanLookups)
		}
	}
	if a := r.Agent("otherbot"); a.Token() != "otherbot" || !slices.Equal(a.Groups(), []int{0}) {
		t.Fatalf("indexed lookup: token %q, groups %v, want group 0", a.Token(), a.Groups())
	}
	if r.tokens.Load() == nil {
		t.Errorf("lookup %d did not build the token index", scanLookups+1)
	}
}

// TestScanAgreesWithTokenIndex holds a pass over the User-agent lines to
// the token index on every file of the corpus and on files made to trip
// them: for tokens that each file names, in other cases, and tokens it
// does not name, both choose the same groups, token and Crawl-delay.
func TestScanAgreesWithTokenIndex(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if len(files) < 100 {
		t.Fatalf("%d files in %s, want the committed corpus", len(files), corpusDir)
	}
	made := [][]byte{
		[]byte("User-agent: *\nUser-agent: A\nDisallow: /a\n\nUser-agent: a\nUser-agent: *\nDisallow: /b\n"),
		[]byte("User-agent: Bot/1.0\nUser-agent: bot\nDisallow: /x\n\nUser-agent: BOT\nCrawl-delay: 3\nDisallow: /y\n"),
		[]byte("User-agent:\nDisallow: /e\n\nUser-agent: *bot\nDisallow: /s\n\nUser-agent: ü-bot\nDisallow: /u\n"),
		[]byte("User-agent: a\nDisallow: /\n"),
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, data)
	}
	for i, data := range made {
		r := Parse(data)
		tokens := []string{"*", "", "Googlebot", "nobody-names-this", "Bot/1.0", "*bot", "ü-bot"}
		for k := range r.agentEnds {
			a := r.agent(k)
			tokens = append(tokens, a, strings.ToUpper(a), strings.ToLower(a),
				strings.ReplaceAll(a, "-", "x"), strings.ReplaceAll(a, "_", "-"), a+"x", strings.TrimSuffix(a, a[len(a)-min(len(a), 1):])+"-")
		}
		x := r.tokenIndex()
		for _, tok := range tokens {
			for _, asked := range [][]string{{tok}, {tok, "Googlebot"}, {"nobody-names-this", tok}} {
				scanned, st := r.scan(asked)
				indexed, it := r.lookup(asked)
				var sg, ig []int
				var sd, id time.Duration
				if scanned != nil {
					sg, sd = scanned.groups, scanned.delay
				}
				if indexed != nil {
					ig, id = indexed.groups, indexed.delay
				}
				if st != it || !slices.Equal(sg, ig) || sd != id {
					t.Errorf("file %d (%d agents, index of %d tokens): %q: a pass chose %q groups %v delay %v, the index %q groups %v delay %v",
						i, len(r.agentEnds), len(x.agents), asked, st, sg, sd, it, ig, id)
				}
			}
		}
	}
}

// TestFirstLookupRemembered checks that the token a file is first asked
// for by its index is answered again as it was, and that other tokens,
// that one in another case included, are still looked up.
func TestFirstLookupRemembered(t *testing.T) {
	r := Parse([]byte("User-agent: a\nDisallow: /a\n\nUser-agent: *\nDisallow: /s\n"))
	for range scanLookups + 1 {
		r.Agent("x")
	}
	if r.tokens.Load() == nil {
		t.Fatal("no token index after the scans")
	}
	for _, tt := range []struct {
		asked, token string
		groups       []int
	}{
		{"x", "*", []int{1}},
		{"A", "A", []int{0}},
		{"x", "*", []int{1}},
		{"b", "*", []int{1}},
		{"a", "a", []int{0}},
		{"A", "A", []int{0}},
		{"*", "*", []int{1}},
	} {
		a := r.Agent(tt.asked)
		if a.Token() != tt.token || !slices.Equal(a.Groups(), tt.groups) {
			t.Errorf("Agent(%q) = token %q, groups %v; want %q, %v", tt.asked, a.Token(), a.Groups(), tt.token, tt.groups)
		}
	}
	if f := r.tokens.Load().first.Load(); f == nil || f.asked != "x" {
		t.Errorf("first lookup remembered: %+v, want x's", f)
	}
}

// TestAllowsAll checks that a token whose groups hold no Disallow is
// allowed every path without a lookup, and that one Disallow in any of
// its groups, merged from anywhere in the file, takes that away: Allowed
// then agrees with Decide on every path, the other forms a server serves
// included.
func TestAllowsAll(t *testing.T) {
	paths := []string{"/", "/x", "/x/y", "/a/../x", "//x", "/a/..%2Fx", "/robots.txt", "/%78", "/x?q=1"}
	for _, tc := range []struct {
		name, file string
		allowsAll  bool
		refused    []string // of paths, the ones refused
	}{
		{"no rule", "User-agent: a\nCrawl-delay: 1\n", true, nil},
		{"empty Disallow", "User-agent: a\nDisallow:\n", true, nil},
		{"Allow alone", "User-agent: a\nAllow: /\nAllow: /x\n", true, nil},
		{"Disallow after Allow", "User-agent: a\nAllow: /\nDisallow: /x\n", false, []string{"/x", "/x/y", "/a/../x", "//x", "/a/..%2Fx", "/%78", "/x?q=1"}},
		{"Disallow in a later group", "User-agent: a\nAllow: /\n\nUser-agent: b\nDisallow: /\n\nUser-agent: a\nDisallow: /x/\n", false, []string{"/x/y"}},
		{"Disallow in the first group", "User-agent: a\nDisallow: /x\n\nUser-agent: a\nAllow: /\n", false, []string{"/x", "/x/y", "/a/../x", "//x", "/a/..%2Fx", "/%78", "/x?q=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := Parse([]byte(tc.file)).Agent("a")
			if agent.sel == nil {
				t.Fatal("no selection for a")
			}
			if agent.sel.allowsAll != tc.allowsAll {
				t.Errorf("allowsAll = %v, want %v", agent.sel.allowsAll, tc.allowsAll)
			}
			for _, p := range paths {
				want := !slices.Contains(tc.refused, p)
				if got := agent.Allowed(p); got != want {
					t.Errorf("Allowed(%q) = %v, want %v", p, got, want)
				}
				if got := agent.Decide(p).Allowed; got != want {
					t.Errorf("Decide(%q).Allowed = %v, want %v", p, got, want)
				}
				if got, lit := agent.AllowedLiteral(p), agent.DecideLiteral(p).Allowed; got != lit {
					t.Errorf("AllowedLiteral(%q) = %v, DecideLiteral says %v", p, got, lit)
				}
			}
		})
	}
}
