package policy

import (
	"sync"
	"testing"
)

const selectionFile = `User-agent: OtherBot
Disallow: /

User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$
Disallow: *?sort=
`

// TestIndexBuiltOnFirstConsult checks that a group's rule index is built
// only when a crawler it applies to first decides, not by Parse.
func TestIndexBuiltOnFirstConsult(t *testing.T) {
	r := Parse([]byte(selectionFile))
	star, other := r.Agent("ExampleBot").sel, r.Agent("OtherBot").sel
	if star == nil || other == nil || star == other {
		t.Fatalf("selections %p and %p, want two", star, other)
	}
	if star.idx.Load() != nil || other.idx.Load() != nil {
		t.Fatal("Parse built a rule index")
	}
	r.Agent("ExampleBot").Allowed("/x")
	if star.idx.Load() == nil {
		t.Error("a decision did not build its group's index")
	}
	if other.idx.Load() != nil {
		t.Error("a decision built the index of a group that does not apply")
	}
}

// TestIndexConcurrentFirstUse has many goroutines make the first
// decisions on one parsed file at once; run with -race, it checks that
// building the index on first use needs no lock, and that every
// goroutine gets the answers of a file decided one path at a time.
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
}
