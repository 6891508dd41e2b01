package policy

import (
	"reflect"
	"sync"
	"testing"
	"time"
)

const groupsFile = `Sitemap: https://example.com/a.xml
User-agent: ABot
user-agent: * (everyone else)
Disallow: /private
Allow: /private/open
Crawl-delay: 0

# a comment
User-agent: BBot/2.0
Crawl-delay: 3
Disallow: /b
Crawl-delay: 1.5

User-agent: CBot
Disallow: /*.pdf$
Disallow:
Sitemap: https://example.com/b.xml
`

// TestGroupsAsWritten checks that the Groups built from a parsed file's compact
// form hold every group as written: its agents, span, rules in file order
// and Crawl-delay, a zero one included.
func TestGroupsAsWritten(t *testing.T) {
	r := Parse([]byte(groupsFile))
	want := []Group{
		{Agents: []string{"ABot", "*"}, Line: 2, EndLine: 6, CrawlDelay: 0, HasCrawlDelay: true,
			Rules: []Rule{{Pattern: "/private", Line: 4}, {Allow: true, Pattern: "/private/open", Line: 5}}},
		{Agents: []string{"BBot"}, Line: 9, EndLine: 12, CrawlDelay: 3 * time.Second, HasCrawlDelay: true,
			Rules: []Rule{{Pattern: "/b", Line: 11}}},
		{Agents: []string{"CBot"}, Line: 14, EndLine: 16, Rules: []Rule{{Pattern: "/*.pdf$", Line: 15}}},
	}
	if got := r.Groups(); !reflect.DeepEqual(got, want) {
		t.Errorf("Groups() =\n%+v\nwant\n%+v", got, want)
	}
	if got := r.Sitemaps(); !reflect.DeepEqual(got, []string{"https://example.com/a.xml", "https://example.com/b.xml"}) {
		t.Errorf("Sitemaps() = %q", got)
	}
	if d := r.Decide("/private/open/x", "ABot"); !d.Matched || d.Rule != want[0].Rules[1] {
		t.Errorf("Decide = %+v, want the rule %+v", d, want[0].Rules[1])
	}
	if got := Parse(nil).Groups(); got != nil {
		t.Errorf("Groups() of an empty file = %+v, want nil", got)
	}
}

// TestGroupsConcurrentFirstUse has goroutines ask for the groups and
// decide at once on a fresh parse; run with -race, it checks that
// building the groups on first use needs no lock, and that every
// goroutine gets the one published slice.
func TestGroupsConcurrentFirstUse(t *testing.T) {
	r := Parse([]byte(groupsFile))
	const n = 8
	got := make([][]Group, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g%2 == 0 {
				if d := r.Decide("/private/x", "ABot"); d.Allowed || d.Rule.Line != 4 {
					t.Errorf("goroutine %d: Decide = %+v, want refused by line 4", g, d)
				}
			}
			got[g] = r.Groups()
		}()
	}
	wg.Wait()
	for g := range got {
		if len(got[g]) != 3 || &got[g][0] != &got[0][0] {
			t.Fatalf("goroutine %d got %d groups at %p, goroutine 0 %d at %p", g, len(got[g]), got[g], len(got[0]), got[0])
		}
	}
}
