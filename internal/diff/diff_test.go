package diff

import (
	"slices"
	"testing"

	"github.com/crawlkit/robots/policy"
)

// TestURLs checks the URLs compared for each rule: the path it is written
// for and the neighbours of a release check (a path inside it, a query
// variant, the path capitalised, a prefix neighbour), and "/".
func TestURLs(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string
	}{
		{"a prefix", "User-agent: *\nDisallow: /drafts\n",
			[]string{"/", "/Drafts", "/drafts", "/drafts/x", "/drafts?x=1", "/draftsx"}},
		{"a directory gives the path without its slash", "User-agent: *\nAllow: /drafts/public/\n",
			[]string{"/", "/drafts/Public/", "/drafts/public", "/drafts/public/", "/drafts/public/?x=1", "/drafts/public/x"}},
		{"a wildcard is filled and the anchor dropped", "User-agent: *\nDisallow: /*.pdf$\n",
			[]string{"/", "/X.pdf", "/x.pdf", "/x.pdf/x", "/x.pdf?x=1", "/x.pdfx"}},
		{"a query is not given a second one", "User-agent: *\nDisallow: /search?q=\n",
			[]string{"/", "/Search?q=", "/search?q=", "/search?q=/x", "/search?q=x"}},
		{"both files' rules count, once", "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /x\n",
			[]string{"/", "/X", "/x", "/x/x", "/x?x=1", "/xx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := policy.Parse([]byte(tt.file))
			if got := URLs(r, r); !slices.Equal(got, tt.want) {
				t.Errorf("URLs = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAgents checks that every crawler either file names is compared
// once, in the order first named, then "*".
func TestAgents(t *testing.T) {
	old := policy.Parse([]byte("User-agent: *\nUser-agent: Googlebot/2.1\nDisallow: /\n\nUser-agent: ü-bot\nUser-agent: bingbot\nDisallow: /x\n"))
	nu := policy.Parse([]byte("User-agent: BingBot\nUser-agent: NewBot\nDisallow: /\n"))
	got := Agents(old, nu)
	want := [][]string{{"Googlebot"}, {"bingbot"}, {"NewBot"}, {"*"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Agents = %q, want %q", got, want)
	}
}

// TestCompare checks that only changed decisions are listed, with both
// sides, and that an unreadable URL is set aside.
func TestCompare(t *testing.T) {
	old := policy.Parse([]byte("User-agent: *\nDisallow: /a\n"))
	nu := policy.Parse([]byte("User-agent: *\nDisallow: /b\n"))
	res := Compare(old, nu, [][]string{{"x"}, {"y", "z"}}, []string{"/a", "/c", "ftp://h/", "/b"})
	if res.Compared != 6 || len(res.Changes) != 4 || !slices.Equal(res.Unreadable, []string{"ftp://h/"}) {
		t.Fatalf("Compare = %+v, want 4 changes of 6 decisions and ftp://h/ unreadable", res)
	}
	c := res.Changes[1]
	if c.URL != "/a" || c.Agent != "y,z" || c.Old.Allowed || !c.New.Allowed || c.Old.Rule.Line != 2 {
		t.Errorf("second change %+v", c)
	}
}
