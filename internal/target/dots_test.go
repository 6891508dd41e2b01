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

// TestAlternates checks the forms a server may serve besides the one sent,
// and that "%2F" is decoded only where it reveals a dot segment.
func TestAlternates(t *testing.T) {
	for _, tc := range []struct{ in, resolved, merged, decoded string }{
		{"/a/b?x=//y", "", "", ""},
		{"/a/../b", "/b", "", ""},
		{"//private/x", "", "/private/x", ""},
		{"/a//b?q=//", "", "/a/b?q=//", ""},
		{"/a//../b", "/a/b", "/b", ""},
		{"/a/./b//c", "/a/b//c", "/a/b/c", ""},
		{"*", "", "", ""},
		{"/public/..%2fprivate/secret.txt", "", "", "/private/secret.txt"},
		{"/public/%2e%2e%2Fprivate", "", "", "/private"},
		{"/public%2f..%2fprivate?x=1", "", "", "/private?x=1"},
		{"/public%2F%2E%2E/private", "", "", "/private"},
		{"/a/b%2f..", "", "", "/a/"},
		{"/public/..%2f%2fprivate", "", "", "/private"},
		{"/a/..%2fb/../c", "/a/c", "", "/c"},
		{"/public/.%2fprivate", "", "", "/public/private"},
		{"/foo%2Fbar", "", "", ""},
		{"/a%2F%2Fb", "", "", ""},
		{"/a%2F.hidden", "", "", ""},
		{"/a?q=..%2f..%2fprivate", "", "", ""},
		{"/a#..%2fprivate", "", "", ""},
		{"/public/..%2fprivate#top", "", "", "/private"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			resolved, merged, decoded := Alternates(tc.in)
			if resolved != tc.resolved || merged != tc.merged || decoded != tc.decoded {
				t.Errorf("Alternates = %q, %q, %q; want %q, %q, %q", resolved, merged, decoded, tc.resolved, tc.merged, tc.decoded)
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
		{"/a%2F..", true},    // an escaped slash, then a dot
		{"/a%2f%2e", true},   // in either case, then an escape
		{"/a%2Fb", false},    // an escaped slash alone
		{"/a%2F/..", true},   // a slash, then a dot
		{"/abcde%2F.", true}, // the escape straddles two words
		{"/abcdef%2F.", true},
		{"/abcdefghijk%2F.", true},
		{"/abcdefghi?%2F..", false},
		{"/abcd%2F?..", false},
		{"/abcdefghijklmn%2F.?", true}, // in the tail
		{"/" + strings.Repeat("a", 100) + "%2F..", true},
		{"/" + strings.Repeat("a", 100) + "%2F%2E", true},
		{"/" + strings.Repeat("a", 100) + "?%2F..", false},
		{"/" + strings.Repeat("a/", 50) + "b%41%2Fc%2f.", true},
		{"/" + strings.Repeat("a/", 50) + "?/./%2F..", false},
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
	for _, s := range []string{"/a/../b", "//x", "/abcdefg//", "/%2e%2E/x?y", "/a#/../b", "/a?//", "/abcdef/?//", "/abcdefghijklm?x//", "/a%2F..", "/abcde%2f%2e", "/abcdefghij?%2F.", "/" + strings.Repeat("b", 70) + "%2F.", "/abcdef#ghijklmn/./x", "/abc#defghijklmnopq%2F.", "/abcdefghijklm#/", "/abcdefghij?klmnopqrs//tuvwxyz", "/abc?defghijklmno%2F.%2F.xyz", "/a/./b?c=12345", "#abcdefg//", "#abcdefghij/./x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		want := false
		for i := 0; i+1 < len(uri) && uri[i] != '?' && uri[i] != '#'; i++ {
			if c := uri[i+1]; uri[i] == '/' && (c == '.' || c == '/' || c == '%') {
				want = true
				break
			}
			if rest := uri[i:]; len(rest) >= 4 && (rest[:3] == "%2F" || rest[:3] == "%2f") && (rest[3] == '.' || rest[3] == '%') {
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
		sinkA, sinkB, sinkC = Alternates(paths[i%len(paths)])
	}
}

var sinkA, sinkB, sinkC string

// FuzzAlternates checks the decoded form against a plain reading of its
// rule: given whenever reading "%2F" as "/" gives the path a dot segment
// it did not have, never when it gives none, and then a clean path, with
// no dot segment and no run of slashes left.
func FuzzAlternates(f *testing.F) {
	for _, s := range []string{"/public/..%2fprivate", "/a%2F%2E%2E/b?x", "/a%2Fb", "/a/../b%2F..", "/%2f..", "/a%2F.b/..%2f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		if !strings.HasPrefix(uri, "/") {
			return
		}
		_, _, decoded := Alternates(uri)
		path, _, _ := strings.Cut(cutFragment(uri), "?")
		plain := strings.NewReplacer("%2F", "/", "%2f", "/").Replace(path)
		want := hasDotSegment(plain) && !hasDotSegment(path)
		if decoded == "" {
			if want {
				t.Fatalf("Alternates(%q) gives no decoded form; %q has a dot segment", uri, plain)
			}
			return
		}
		if !hasDotSegment(plain) {
			t.Fatalf("Alternates(%q) decoded = %q, but %q has no dot segment", uri, decoded, plain)
		}
		dpath, _, _ := strings.Cut(decoded, "?")
		if !strings.HasPrefix(dpath, "/") || strings.Contains(dpath, "//") || hasDotSegment(dpath) {
			t.Fatalf("Alternates(%q) decoded = %q, not a clean path", uri, decoded)
		}
	})
}
