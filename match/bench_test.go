package match

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkPathological(b *testing.B) {
	p, err := Compile("/*a*a*a*a*a*a*a*a*a*a*a*b")
	if err != nil {
		b.Fatal(err)
	}
	path := AppendPath(nil, "/"+strings.Repeat("a", 2000))
	b.SetBytes(int64(len(path)))
	for b.Loop() {
		p.Match(path)
	}
}

// BenchmarkLookupLarge decides paths against 20,000 rules with distinct
// literal prefixes, the shape of the largest real robots.txt files.
func BenchmarkLookupLarge(b *testing.B) {
	var rules []Rule
	for i := range 20000 {
		p, err := Compile(fmt.Sprintf("/section%d/item-%d/", i%97, i))
		if err != nil {
			b.Fatal(err)
		}
		rules = append(rules, Rule{Pattern: p, Allow: i%3 == 0})
	}
	s := NewSet(rules)
	paths := []string{"/section5/item-12345/page.html", "/other/path?q=1", "/section96/item-19999/x"}
	var buf [256]byte
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Lookup(AppendPath(buf[:0], paths[i%len(paths)]))
	}
}
