package policy

import (
	"github.com/crawlkit/robots/match"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no bytes make Parse or Decide panic, and that the
// yes/no and explained answers agree.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/conformance/*/robots.txt")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data, "/a/b?c", "googlebot")
		}
	}
	f.Add([]byte("\xff\xfe\x00garbage\r\r\n:::"), "/", "*")
	f.Fuzz(func(t *testing.T, data []byte, path, token string) {
		r := Parse(data)
		d := r.Decide(path, token)
		if got := r.Allowed(path, token); got != d.Allowed {
			t.Errorf("Allowed = %v, Decide = %+v", got, d)
		}
		a := r.Agent(token)
		dl := a.DecideLiteral(path)
		if got := a.AllowedLiteral(path); got != dl.Allowed {
			t.Errorf("AllowedLiteral = %v, DecideLiteral = %+v", got, dl)
		}
		if d.Allowed && !dl.Allowed {
			t.Errorf("Decide allowed what DecideLiteral refused: %+v, %+v", d, dl)
		}
		for _, w := range r.Warnings() {
			if w.Line < 1 || w.Line > r.Lines() {
				t.Errorf("warning on line %d of %d: %s", w.Line, r.Lines(), w.Message)
			}
		}
	})
}

// FuzzSetIndex compares the rule index a selection builds on first use
// with a plain scan of the rules of the groups that apply: every rule's
// pattern matched on its own, the longest winning and an Allow winning a
// tie (RFC 9309 section 2.2.2).
func FuzzSetIndex(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /*a\nAllow: /*ab$\nDisallow: *b*c\nAllow: /x"), "/zab", "bot")
	f.Add([]byte("User-agent: bot\nDisallow: /*.php\nUser-agent: *\nAllow: /p\nUser-agent: BOT\nAllow: /*x.php$\nDisallow: /*"), "/x.php", "Bot")
	f.Add([]byte("user-agent: *\ndisallow: *a\nallow: *b\ndisallow: *c\nallow: *d\ndisallow: *e\nallow: *f\ndisallow: *g\nallow: *h\ndisallow: *i\nallow: /*ab*"), "/gabi", "*")
	f.Fuzz(func(t *testing.T, data []byte, path, token string) {
		r := Parse(data)
		a := r.Agent(token)
		norm := match.AppendPath(nil, path)
		want, matched := true, false
		best := -1
		for _, gi := range a.Groups() {
			for _, rule := range r.Groups()[gi].Rules {
				p, err := match.Compile(rule.Pattern)
				if err != nil {
					t.Fatalf("Parse kept pattern %q: %v", rule.Pattern, err)
				}
				if !p.Match(norm) {
					continue
				}
				if !matched || p.Len() > best || p.Len() == best && rule.Allow {
					want, matched, best = rule.Allow, true, p.Len()
				}
			}
		}
		if string(norm) == "/robots.txt" {
			want = true
		}
		if got := a.AllowedLiteral(path); got != want {
			t.Errorf("AllowedLiteral(%q) = %v, a scan of the rules gives %v", path, got, want)
		}
	})
}
