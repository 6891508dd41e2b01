package sfv

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func tok(key, value string) Member { return Member{Key: key, Token: value, IsToken: true} }
func other(key string) Member      { return Member{Key: key} }

// TestParseDictionary checks the Dictionary syntax of RFC 9651 sections
// 3.2 and 4.2.2 on the examples of the AI preference vocabulary and on
// every kind of value.
func TestParseDictionary(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Member
	}{
		{"empty", "", nil},
		{"only spaces", "   ", nil},
		{"vocab example", "train-ai=y, search=n", []Member{tok("train-ai", "y"), tok("search", "n")}},
		{"no spaces", "train-ai=n,search=y", []Member{tok("train-ai", "n"), tok("search", "y")}},
		{"tabs around comma", "train-ai=n\t,\tsearch=y", []Member{tok("train-ai", "n"), tok("search", "y")}},
		{"leading and trailing spaces", "  train-ai=n  ", []Member{tok("train-ai", "n")}},
		{"last value wins, first place kept", "train-ai=y, search=n, train-ai=n", []Member{tok("train-ai", "n"), tok("search", "n")}},
		{"vocab: duplicates of other types", `train-ai=y, train-ai, search=n, search="n"`, []Member{other("train-ai"), other("search")}},
		{"vocab: parameters of the last", "train-ai;allow=n, train-ai=y", []Member{tok("train-ai", "y")}},
		{"vocab: parameters on an unknown", `train-ai;has;parameters="?"`, []Member{other("train-ai")}},
		{"boolean true alone", "search", []Member{other("search")}},
		{"token parameters", "train-ai=n;why=policy;v=1", []Member{tok("train-ai", "n")}},
		{"token with colon and slash", "a=x:y/z", []Member{tok("a", "x:y/z")}},
		{"upper-case token value", "train-ai=N", []Member{tok("train-ai", "N")}},
		{"star key and token", "*=*", []Member{tok("*", "*")}},
		{"integer", "a=-15", []Member{other("a")}},
		{"decimal", "a=1.5", []Member{other("a")}},
		{"string with escapes", `a="x\"y\\z"`, []Member{other("a")}},
		{"byte sequence", "a=:aGVsbG8=:", []Member{other("a")}},
		{"byte sequence unpadded", "a=:aGVsbG8:", []Member{other("a")}},
		{"boolean", "a=?0, b=?1", []Member{other("a"), other("b")}},
		{"date", "a=@1659578233", []Member{other("a")}},
		{"display string", `a=%"f%c3%bc"`, []Member{other("a")}},
		{"inner list", "a=(y n);p=1, b=()", []Member{other("a"), other("b")}},
		{"inner list with parameters", `a=( y;q "s" );r`, []Member{other("a")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDictionary(tc.in)
			if err != nil {
				t.Fatalf("ParseDictionary(%q): %v", tc.in, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ParseDictionary(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// TestParseDictionaryFails checks that input outside the syntax fails as
// a whole, as RFC 9651 section 4.2 requires.
func TestParseDictionaryFails(t *testing.T) {
	for _, in := range []string{
		"Train-AI=n",          // upper-case key
		"train-ai=n,",         // trailing comma
		"train-ai=n, ",        // trailing comma and space
		",train-ai=n",         // leading comma
		"train-ai=n search=y", // no comma
		"train-ai=n;",         // parameter without key
		"train-ai=",           // missing value
		"train-ai=yes please", // space inside
		"train-ai:n",          // not "="
		"1a=n",                // key starts with a digit
		"-a=n",                // key starts with "-"
		`a="open`,             // unclosed string
		`a="\n"`,              // bad escape
		"a=\"x\ty\"",          // control in string
		"a=(y n",              // unclosed inner list
		"a=(y,n)",             // comma in inner list
		"a=1.",                // decimal without fraction
		"a=1.2345",            // four fraction digits
		"a=1234567890123.5",   // 13 integer digits
		"a=1234567890123456",  // 16-digit integer
		"a=-",                 // sign alone
		"a=:!!:",              // not base64
		"a=:abc",              // unclosed byte sequence
		"a=?2",                // not a boolean
		"a=@1.5",              // decimal date
		`a=%"x`,               // unclosed display string
		`a=%"%C3%BC"`,         // upper-case hex in display string
		`a=%"%ff"`,            // not UTF-8
		"a=n\x00",             // NUL after the value
		"a=ü",                 // non-ASCII
		"\ta=n",               // leading tab (only spaces are discarded)
	} {
		got, err := ParseDictionary(in)
		if !errors.Is(err, ErrSyntax) || got != nil {
			t.Errorf("ParseDictionary(%q) = %+v, %v; want a syntax error", in, got, err)
		}
	}
}

// TestParseDictionaryLinear checks that a line of very many members, many
// of them repeated, parses in linear time: a quadratic search for
// repeated keys would take minutes here.
func TestParseDictionaryLinear(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100_000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("k")
		b.WriteString(strings.Repeat("a", i%50))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("=y")
	}
	got, err := ParseDictionary(b.String())
	// (i%50, i%26) takes lcm(50, 26) = 650 distinct values.
	if err != nil || len(got) != 650 {
		t.Fatalf("got %d members, %v", len(got), err)
	}
}

func FuzzParseDictionary(f *testing.F) {
	for _, s := range []string{"train-ai=y, search=n", `a=("x" 1;p);q, b=?1`, "a=:aGk=:", `a=%"%c3%bc"`, "a=@-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		members, err := ParseDictionary(s)
		if err != nil {
			return
		}
		keys := map[string]bool{}
		for _, m := range members {
			if keys[m.Key] {
				t.Fatalf("key %q twice in %q", m.Key, s)
			}
			keys[m.Key] = true
			if !strings.Contains(s, m.Key) || m.IsToken && !strings.Contains(s, m.Token) {
				t.Fatalf("member %+v not from %q", m, s)
			}
		}
	})
}
