package match

import (
	"strings"
	"testing"
	"unsafe"
)

// TestAppendPath checks path normalisation, RFC 9309 section 2.2.2.
func TestAppendPath(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty path is the root", "", "/"},
		{"plain path unchanged", "/a/b?x=1", "/a/b?x=1"},
		{"fragment dropped", "/a#b", "/a"},
		{"fragment only", "#top", "/"},
		{"non-ASCII becomes uppercase escapes", "/café", "/caf%C3%A9"},
		{"escape hex uppercased", "/caf%c3%a9", "/caf%C3%A9"},
		{"unreserved escape decoded", "/%62%61%7A", "/baz"},
		{"unreserved punctuation decoded", "/%2D%2E%5F%7E", "/-._~"},
		{"reserved slash stays encoded", "/a%2fb", "/a%2Fb"},
		{"literal star escaped", "/a*b", "/a%2Ab"},
		{"literal dollar escaped", "/a$", "/a%24"},
		{"escaped star stays", "/a%2ab", "/a%2Ab"},
		{"bare percent is literal", "/100%", "/100%25"},
		{"percent with one hex digit", "/a%4", "/a%254"},
		{"percent with bad hex", "/a%zz", "/a%25zz"},
		{"space escaped", "/a b", "/a%20b"},
		{"tab escaped", "/a\tb", "/a%09b"},
		{"plus not form-decoded", "/s?q=a+b", "/s?q=a+b"},
		{"double slash kept", "//x", "//x"},
		{"nbsp is a path character", "/a\u00a0", "/a%C2%A0"},
		{"characters not allowed raw in a URI escaped", "/\"<>\\^`{|}", "/%22%3C%3E%5C%5E%60%7B%7C%7D"},
		{"their escapes uppercased and kept", "/%7b%7C%5c", "/%7B%7C%5C"},
		{"sub-delims stay raw", "/!'()+,;=:@", "/!'()+,;=:@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendPath(nil, tt.in)); got != tt.want {
				t.Errorf("AppendPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestAppendPathEscapesAtEveryOffset puts an octet to escape at each
// place of a long path, so that whatever number of octets AppendPath
// reads at a step, none goes unread.
func TestAppendPathEscapesAtEveryOffset(t *testing.T) {
	const plain = "/abcdefghijklmnopqrstuvwxyz012345"
	for i := 1; i < len(plain); i++ {
		for _, c := range []string{" ", "*", "%7e", "\xff"} {
			in := plain[:i] + c + plain[i:]
			if got, want := string(AppendPath(nil, in)), refPath(in); got != want {
				t.Errorf("AppendPath(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

// TestCompile checks pattern normalisation and the patterns that must be
// ignored, RFC 9309 sections 2.2.2 and 2.2.3.
func TestCompile(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"prefix", "/fish", "/fish", nil},
		{"wildcards kept", "/*.php$", "/*.php$", nil},
		{"leading star", "*m", "*m", nil},
		{"mid dollar is literal", "/a$b", "/a%24b", nil},
		{"final dollar anchors", "/a$", "/a$", nil},
		{"unreserved escape decoded", "/%63afe", "/cafe", nil},
		{"reserved escape kept, hex upper", "/a%2fb", "/a%2Fb", nil},
		{"escaped star is literal", "/f%2a", "/f%2A", nil},
		{"non-ASCII escaped", "/ツ", "/%E3%83%84", nil},
		{"characters not allowed raw escaped", "/x{y}|\\^", "/x%7By%7D%7C%5C%5E", nil},
		{"their escapes kept, hex upper", "/x%7by%7d", "/x%7By%7D", nil},
		{"invalid escape", "/bad%zz", "", ErrInvalidEscape},
		{"truncated escape", "/bad%2", "", ErrInvalidEscape},
		{"space", "/two words", "", ErrSpace},
		{"control character after a change", "/%7e\x01", "", ErrSpace},
		{"changed after a plain run", "/plain/run/then/%7e$", "/plain/run/then/~$", nil},
		{"dollar only at the end of a change", "/a%7e$b$", "/a~%24b$", nil},
		{"no leading slash", "fish", "", ErrStart},
		{"empty", "", "", ErrStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.in)
			if err != tt.err {
				t.Fatalf("Compile(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if err == nil && p.String() != tt.want {
				t.Errorf("Compile(%q) = %q, want %q", tt.in, p.String(), tt.want)
			}
			norm, err := Normalize(tt.in)
			if err != tt.err || norm != tt.want {
				t.Fatalf("Normalize(%q) = %q, %v; want %q, %v", tt.in, norm, err, tt.want, tt.err)
			}
			if err == nil && CompileNormalized(norm) != p {
				t.Errorf("CompileNormalized(%q) = %+v, want Compile's %+v", norm, CompileNormalized(norm), p)
			}
		})
	}
}

// TestNormalizeUnchangedDoesNotAllocate checks that a pattern normalising
// leaves as it is costs a parse no allocation, and is returned itself.
func TestNormalizeUnchangedDoesNotAllocate(t *testing.T) {
	for _, p := range []string{"/fish", "/*.php$", "*?sort=", "/a/b-c_d~e!f'(g)+,;=:@"} {
		var norm string
		if n := testing.AllocsPerRun(100, func() { norm, _ = Normalize(p) }); n != 0 {
			t.Errorf("Normalize(%q) allocates %v times", p, n)
		}
		if unsafe.StringData(norm) != unsafe.StringData(p) {
			t.Errorf("Normalize(%q) returned a copy", p)
		}
	}
}

// TestPatternMatch checks the wildcard semantics of RFC 9309 section 2.2.3.
func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"/fish", "/fish", true},
		{"/fish", "/fish.html", true},
		{"/fish", "/Fish", false},
		{"/fish", "/catfish", false},
		{"/fish/", "/fish", false},
		{"/fish*", "/fishheads", true},
		{"/*.php", "/a/b.php?x", true},
		{"/*.php$", "/a.php", true},
		{"/*.php$", "/a.php?x", false},
		{"/*.php$", "/a.php5", false},
		{"/fish*.php", "/fishheads/catfish.php?p", true},
		{"/$", "/", true},
		{"/$", "/a", false},
		{"/a*a$", "/a", false}, // the final literal may not reuse the prefix's octets
		{"/a*a$", "/aa", true},
		{"/ab*b$", "/ab", false},
		{"/*x*xy$", "/xy", false}, // nor the octets of a literal between stars
		{"/*x*xy$", "/xxy", true},
		{"*m", "/foo.htm", true},
		{"*m", "/foo", false},
		{"/a*b*c", "/abc", true},
		{"/a*b*c", "/acb", false},
		{"/a**b", "/ab", true},
		{"/*", "/", true},
		{"/a*$", "/a/anything", true},
		{"/a*b$", "/ab/b", true},
		{"/a*b$", "/ab/bc", false},
		{"/x*ab$", "/xab", true},
		{"/x*aba$", "/xaba", true},
		{"/x*aba$", "/xab", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.path, func(t *testing.T) {
			p, err := Compile(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Match(AppendPath(nil, tt.path)); got != tt.want {
				t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.path, got, tt.want)
			}
		})
	}
}

func mustSet(t testing.TB, rules ...string) *Set {
	t.Helper()
	var rs []Rule
	for _, r := range rules {
		kind, pat, _ := strings.Cut(r, " ")
		p, err := Compile(pat)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, Rule{Pattern: p, Allow: kind == "allow"})
	}
	return NewSet(rs)
}

// TestSetPrecedence checks RFC 9309 section 2.2.2: the longest match wins,
// an allow wins a tie, no match is -1, file order does not matter.
func TestSetPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		rules []string
		path  string
		want  int
	}{
		{"no rules", nil, "/a", -1},
		{"no match", []string{"disallow /a"}, "/b", -1},
		{"longest wins over shorter", []string{"allow /p", "disallow /"}, "/page", 0},
		{"longest wins regardless of order", []string{"disallow /", "allow /p"}, "/page", 1},
		{"allow wins a tie", []string{"disallow /folder", "allow /folder"}, "/folder/x", 1},
		{"wildcard length counts the star", []string{"allow /page", "disallow /*.htm"}, "/page.htm", 1},
		{"tie between wildcard and literal", []string{"allow /page", "disallow /*.ph"}, "/page.php5", 0},
		{"anchor counts", []string{"allow /$", "disallow /"}, "/", 0},
		{"anchor does not match longer", []string{"allow /$", "disallow /"}, "/a", 1},
		{"escape counts three", []string{"disallow /ツ", "allow /*%83%84"}, "/ツ", 0},
		{"leading star candidate", []string{"disallow /a", "allow *abc"}, "/abc", 1},
		{"shared prefixes", []string{"disallow /ab", "allow /abc", "disallow /abcd", "allow /a"}, "/abcx", 1},
		{"split edge", []string{"disallow /abcd", "disallow /abxy"}, "/abxyz", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSet(t, tt.rules...)
			if got := s.Lookup(AppendPath(nil, tt.path)); got != tt.want {
				t.Errorf("Lookup(%q) = %d, want %d", tt.path, got, tt.want)
			}
		})
	}
}

// TestPathologicalPatternIsLinear checks that matching a many-star pattern
// does not backtrack: a path of n octets is scanned a bounded number of
// times per literal run, so the call finishes without blow-up. The work
// count is measured by allocation-free repetition, not by wall-clock time.
func TestPathologicalPatternIsLinear(t *testing.T) {
	p, err := Compile("/*a*a*a*a*a*a*a*a*a*a*a*b")
	if err != nil {
		t.Fatal(err)
	}
	path := AppendPath(nil, "/"+strings.Repeat("a", 2000))
	if p.Match(path) {
		t.Fatal("matched a path without b")
	}
	if !p.Match(append(path, 'b')) {
		t.Fatal("did not match a path ending in b")
	}
	if n := testing.AllocsPerRun(10, func() { p.Match(path) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

// TestLookupDoesNotAllocate checks the hot path, normalisation included,
// stays allocation-free for ordinary paths.
func TestLookupDoesNotAllocate(t *testing.T) {
	s := mustSet(t, "disallow /private", "allow /private/open", "disallow /*.php$", "disallow *?session=")
	for _, path := range []string{"/private/x", "/a/b.php", "/caf%c3%a9?q=%2f", "/public?session=1"} {
		var buf [256]byte
		if n := testing.AllocsPerRun(100, func() { s.Lookup(AppendPath(buf[:0], path)) }); n != 0 {
			t.Errorf("Lookup(AppendPath(%q)) allocates %v times", path, n)
		}
	}
}
