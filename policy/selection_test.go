package policy

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
	star, other := r.Agent("ExampleBot").sel, r.Agent("OtherBot").sel
	if star == nil || other == nil || star == other {
		t.Fatalf("selections %p and %p, want two", star, other)
	}
	if star.idx.Load() != nil || other.idx.Load() != nil {
		t.Fatal("Parse built a rule index")
	}
	for k := range indexAfter {
		r.Agent("ExampleBot").Allowed("/x")
		if star.idx.Load() != nil {
			t.Fatalf("decision %d of %d built the index", k+1, indexAfter)
		}
	}
	r.Agent("ExampleBot").Decide("/private/x")
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
// sharing a group's first eight octets is not taken for it.
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
		s := r.named(tt.token)
		switch {
		case tt.group < 0 && s != nil:
			t.Errorf("named(%q) = groups %v, want none", tt.token, s.groups)
		case tt.group >= 0 && (s == nil || len(s.groups) != 1 || s.groups[0] != tt.group):
			t.Errorf("named(%q) = %v, want group %d", tt.token, s, tt.group)
		}
	}
}
