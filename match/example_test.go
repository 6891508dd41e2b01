package match_test

import (
	"fmt"

	"github.com/crawlkit/robots/match"
)

func ExampleAppendPath() {
	fmt.Println(string(match.AppendPath(nil, "/caf%c3%a9/%7Euser/a*b#frag")))
	// Output: /caf%C3%A9/~user/a%2Ab
}

func ExampleCompile() {
	p, _ := match.Compile("/*.php$")
	for _, path := range []string{"/index.php", "/a/b.php?x=1"} {
		fmt.Println(path, p.Match(match.AppendPath(nil, path)))
	}
	// Output:
	// /index.php true
	// /a/b.php?x=1 false
}

func ExampleSet() {
	var rules []match.Rule
	for _, r := range []struct {
		pattern string
		allow   bool
	}{{"/", false}, {"/public", true}, {"/public/*.tmp", false}} {
		p, _ := match.Compile(r.pattern)
		rules = append(rules, match.Rule{Pattern: p, Allow: r.allow})
	}
	set := match.NewSet(rules)
	for _, path := range []string{"/home", "/public/a.html", "/public/x.tmp"} {
		i := set.Lookup(match.AppendPath(nil, path))
		fmt.Println(path, set.Rule(i).Pattern, set.Rule(i).Allow)
	}
	// Output:
	// /home / false
	// /public/a.html /public true
	// /public/x.tmp /public/*.tmp false
}
