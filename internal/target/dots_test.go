package target

import (
	"strings"
	"testing"
)

// TestResolveDots checks dot-segment removal (RFC 3986 section 5.2.4).
func TestResolveDots(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/a/b/../c", "/a/c"},
		{"/a/..", "/"},
		{"/..", "/"},
		{"/a/./b/.", "/a/b/"},
		{"/a/%2E%2e/b?q=/../x", "/b?q=/../x"},
		{"/a/b", ""},
		{"/a/...", ""},
		{"*", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ResolveDots(tc.in)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("ResolveDots = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

// FuzzResolveDots checks that a resolved path starts with "/" and has no
// dot segment left, in any spelling.
func FuzzResolveDots(f *testing.F) {
	for _, s := range []string{"/a/../b", "/%2e%2E/x?y", "/./", "/a/b/..", "/..%2f/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		got, ok := ResolveDots(uri)
		if !ok {
			return
		}
		path, _, _ := strings.Cut(got, "?")
		if !strings.HasPrefix(path, "/") {
			t.Fatalf("ResolveDots(%q) = %q, not a path", uri, got)
		}
		for _, seg := range strings.Split(path[1:], "/") {
			if dotSegment(seg) != "" {
				t.Fatalf("ResolveDots(%q) = %q keeps dot segment %q", uri, got, seg)
			}
		}
	})
}

// TestAlternates checks the forms a server may serve besides the one sent.
func TestAlternates(t *testing.T) {
	for _, tc := range []struct{ in, resolved, merged string }{
		{"/a/b?x=//y", "", ""},
		{"/a/../b", "/b", ""},
		{"//private/x", "", "/private/x"},
		{"/a//b?q=//", "", "/a/b?q=//"},
		{"/a//../b", "/a/b", "/b"},
		{"/a/./b//c", "/a/b//c", "/a/b/c"},
		{"*", "", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			resolved, merged := Alternates(tc.in)
			if resolved != tc.resolved || merged != tc.merged {
				t.Errorf("Alternates = %q, %q; want %q, %q", resolved, merged, tc.resolved, tc.merged)
			}
		})
	}
}

// TestIsRobotsTxt checks that /robots.txt is recognised on its normalised
// path, whatever its query.
func TestIsRobotsTxt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"/robots.txt", true},
		{"/robots.txt?x=1", true},
		{"/%72obots.txt", true},
		{"/robots.txt#top", true},
		{"/robots.txt/", false},
		{"/Robots.txt", false},
		{"/robots.txt%3Fx", false},
		{"/robots.txtx", false},
		{"/" + strings.Repeat("%2F", 20), false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := IsRobotsTxt(tc.in); got != tc.want {
				t.Errorf("IsRobotsTxt(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestMayHaveAlternates checks the quick test, across the seven-octet
// steps it reads in and the query or fragment it stops at.
func TestMayHaveAlternates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"/", false},
		{"/a/b/c.html", false},
		{"/a.b/c.d/e.f/g.h", false},
		{"/./", true},
		{"//", true},
		{"/abcdef/../x", true},
		{"/abcdef/.hidden", true},   // a dot file: a false alarm
		{"/abcdef/%41", true},       // an escape: a false alarm
		{"/abcdef//x", true},        // the slashes straddle two words
		{"/abcdefghijklm/./", true}, // in the tail
		{"/abcdefghijklmn//", true}, // the last octet of a word, then the next
		{"/abcdefghij/%2e%2E/x", true},
		{"/a?x=//y/../z", false},
		{"/a#x//y", false},
		{"/abcdefghijklmnopqrst?x=//y/../z", false},
		{"/a%2F..", false}, // an escaped slash starts no segment
		{"/abcdef/?x//", false},
		{"/abcdef/.?x", true},
		{"/abcdefghijklm?//", false},
		{"/abcdefghijklm#//", false},
		{"/" + strings.Repeat("a", 100) + "/./", true},
		{"/" + strings.Repeat("a", 100) + "/%2e/", true},
		{"/" + strings.Repeat("a", 100) + "/?//", false},
		{"/" + strings.Repeat("a", 100) + "#/./", false},
		{"/" + strings.Repeat("a/", 100), false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := mayHaveAlternates(tc.in); got != tc.want {
				t.Errorf("mayHaveAlternates(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzMayHaveAlternates checks that the quick test answers as an
// octet-by-octet reading of its rule does, so that Alternates, which asks
// it first, misses no form.
func FuzzMayHaveAlternates(f *testing.F) {
	for _, s := range []string{"/a/../b", "//x", "/abcdefg//", "/%2e%2E/x?y", "/a#/../b", "/a?//", "/abcdef/?//", "/abcdefghijklm?x//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		want := false
		for i := 0; i+1 < len(uri) && uri[i] != '?' && uri[i] != '#'; i++ {
			if c := uri[i+1]; uri[i] == '/' && (c == '.' || c == '/' || c == '%') {
				want = true
				break
			}
		}
		if got := mayHaveAlternates(uri); got != want {
			t.Fatalf("mayHaveAlternates(%q) = %v, want %v", uri, got, want)
		}
	})
}

// BenchmarkAlternates measures what every decision pays to learn that a
// path has no other form, over paths of the shapes crawlers send: plain,
// with a query, with escapes (non-ASCII, spaces), long, and one with a
// dot segment.
func BenchmarkAlternates(b *testing.B) {
	paths := []string{
		"/a/b/c.html",
		"/search?q=caf%C3%A9&page=2",
		"/wp-admin/admin-ajax.php?action=heartbeat",
		"/caf%C3%A9/menu%20du%20jour.pdf",
		"/static/js/app.2f9c41e0.js",
		"/en-us/autos/car-compare/2024/sedan-and-hatchback-models/overview?ref=nav%2Fmain",
		"/products/12345/blue-widget-with-a-rather-long-name-for-testing-the-long-path-branch.html",
		"/public/../private/x",
	}
	for i := 0; b.Loop(); i++ {
		sinkA, sinkB = Alternates(paths[i%len(paths)])
	}
}

var sinkA, sinkB string
