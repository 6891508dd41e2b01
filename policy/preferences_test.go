package policy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/robots/policy"
)

// prefs returns "train-ai search ai-input" for path and tokens, each as
// y, n or unknown, with the lines that gave them: "n[4] y[9] unknown".
func prefs(r *policy.Robots, path string, tokens ...string) string {
	p := r.Preferences(path, tokens...)
	var parts []string
	for _, l := range p.Labels {
		s := l.Usage.String()
		if len(l.From) > 0 {
			var lines []string
			for _, f := range l.From {
				lines = append(lines, fmt.Sprintf("%.1s%02d", strings.TrimPrefix(f.Source.String(), "Content-"), f.Line))
			}
			s += "[" + strings.Join(lines, ",") + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestPreferences checks the answer per URL: Content-Usage by longest
// path (draft-ietf-aipref-attach-05 section 3.1), Content-Signal per
// group and for the whole file, combined per label
// (draft-ietf-aipref-vocab-07 section 5.1). Lines are shown as U or S
// (Content-Usage, Content-Signal) and a two-digit number.
func TestPreferences(t *testing.T) {
	for _, tc := range []struct {
		name, robots, agent, path, want string
	}{
		{"attach 3.4 example: rest of site", attachExample, "OtherBot", "/test", "n[U04] unknown unknown"},
		{"attach 3.4 example: disallowed path has none", attachExample, "OtherBot", "/never/test", "unknown unknown unknown"},
		{"attach 3.4 example: longer path wins", attachExample, "OtherBot", "/ai-ok/test", "y[U05] unknown unknown"},
		{"attach 3.4 example: ExampleBot's own group", attachExample, "ExampleBot", "/never/test", "y[U09] unknown unknown"},
		{"header example in robots.txt", "User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\n", "a", "/x", "n[U03] unknown unknown"},
		{"vocab example", "User-agent: *\nContent-Usage: train-ai=y, search=n\n", "a", "/", "y[U02] n[U02] unknown"},
		{"identical paths: n wins", "User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n, search=y\n", "a", "/a/b", "n[U03] y[U03] unknown"},
		{"identical paths both y", "User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=y\n", "a", "/a", "y[U02,U03] unknown unknown"},
		{"longest is not most restrictive", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /open/ search=y\n", "a", "/open/x", "unknown y[U03] unknown"},
		{"path matches like Disallow, with *", "User-agent: *\nContent-Usage: /*.pdf train-ai=n\n", "a", "/docs/x.pdf", "n[U02] unknown unknown"},
		{"path with $", "User-agent: *\nContent-Usage: /x$ train-ai=n\n", "a", "/x/y", "unknown unknown unknown"},
		{"path percent-encoding", "User-agent: *\nContent-Usage: /caf%C3%A9 train-ai=n\n", "a", "/café", "n[U02] unknown unknown"},
		{"path followed by a tab", "User-agent: *\nContent-Usage: /a\ttrain-ai=n\n", "a", "/a", "n[U02] unknown unknown"},
		{"path alone states nothing", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a\n", "a", "/a", "unknown unknown unknown"},
		{"failed dictionary is all unknown and still longest", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a Train-AI=y\n", "a", "/a", "unknown unknown unknown"},
		{"repeated key: last counts", "User-agent: *\nContent-Usage: train-ai=n, train-ai=y\n", "a", "/", "y[U02] unknown unknown"},
		{"vocab 6.4.1: repeats of other types", "User-agent: *\nContent-Usage: train-ai=y, train-ai, search=n, search=\"n\"\n", "a", "/", "unknown unknown unknown"},
		{"vocab 6.4.2: parameters ignored", "User-agent: *\nContent-Usage: train-ai;allow=n, train-ai=y\n", "a", "/", "y[U02] unknown unknown"},
		{"unknown keys ignored", "User-agent: *\nContent-Usage: train-genai=n, foo=n, search=y\n", "a", "/", "unknown y[U02] unknown"},
		{"yes is not y", "User-agent: *\nContent-Usage: train-ai=yes\n", "a", "/", "unknown unknown unknown"},
		{"inner list is unknown", "User-agent: *\nContent-Usage: train-ai=(n)\n", "a", "/", "unknown unknown unknown"},
		{"Content-Usage ends the User-agent run", "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n", "b", "/", "unknown unknown unknown"},
		{"Content-Usage ends the run: a keeps it", "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n", "a", "/", "n[U02] unknown unknown"},
		{"Content-Usage before any group belongs to none", "Content-Usage: train-ai=n\nUser-agent: *\nDisallow: /x\n", "a", "/", "unknown unknown unknown"},
		{"merged groups", "User-agent: a\nContent-Usage: train-ai=n\n\nUser-agent: a\nContent-Usage: /p search=n\n", "a", "/p", "unknown n[U05] unknown"},
		{"no group applies", "User-agent: a\nContent-Usage: train-ai=n\n", "b", "/", "unknown unknown unknown"},
		{"Cloudflare managed robots.txt", cloudflareExample, "SomeBot", "/page", "n[S02] y[S02] unknown"},
		{"Cloudflare: a named group leaves the * signal", cloudflareExample, "GPTBot", "/page", "unknown unknown unknown"},
		{"Content-Signal before any group applies to all", "Content-Signal: ai-train=no, ai-input=yes\n\nUser-agent: a\nDisallow: /x\n", "b", "/", "n[S01] unknown y[S01]"},
		{"file-wide and group signals combine", "Content-Signal: search=yes\nUser-agent: a\nContent-Signal: search=no\n", "a", "/", "unknown n[S03] unknown"},
		{"Content-Signal does not end the run", "User-agent: a\nContent-Signal: ai-train=no\nUser-agent: b\nDisallow: /x\n", "b", "/", "n[S02] unknown unknown"},
		{"Content-Signal on a disallowed path", "User-agent: *\nDisallow: /\nContent-Signal: ai-train=no\nContent-Usage: train-ai=y\n", "a", "/x", "n[S03] unknown unknown"},
		{"both lines: n wins", "User-agent: *\nContent-Usage: train-ai=y\nContent-Signal: ai-train=no\n", "a", "/", "n[S03] unknown unknown"},
		{"both lines: y from both", "User-agent: *\nContent-Usage: train-ai=y\nContent-Signal: ai-train=yes, search=no\n", "a", "/", "y[U02,S03] n[S03] unknown"},
		{"Content-Signal y is not yes", "User-agent: *\nContent-Signal: ai-train=n\n", "a", "/", "unknown unknown unknown"},
		{"Content-Signal keys and values any case", "User-agent: *\nContent-Signal: AI-Train=No\n", "a", "/", "n[S02] unknown unknown"},
		{"Content-Signal repeated key: most restrictive", "User-agent: *\nContent-Signal: search=no, search=yes\n", "a", "/", "unknown n[S02] unknown"},
		{"field names in any case", "user-agent: *\nCONTENT-USAGE: train-ai=n\ncontent-signal: search=yes\n", "a", "/", "n[U02] y[S03] unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := policy.Parse([]byte(tc.robots))
			if got := prefs(r, tc.path, tc.agent); got != tc.want {
				t.Errorf("Preferences(%q, %q) = %s, want %s", tc.path, tc.agent, got, tc.want)
			}
		})
	}
}

const attachExample = `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`

const cloudflareExample = `User-Agent: *
Content-signal: search=yes, ai-train=no
Allow: /

User-agent: GPTBot
Disallow: /
`

// TestPreferencesDisallowed checks that a disallowed path carries no
// Content-Usage preference, as the transport decides it: a form a server
// resolves the path to counts.
func TestPreferencesDisallowed(t *testing.T) {
	r := policy.Parse([]byte("User-agent: *\nDisallow: /private\nContent-Usage: train-ai=y\n"))
	for path, disallowed := range map[string]bool{"/public": false, "/private": true, "/public/../private": true} {
		p := r.Preferences(path, "bot")
		if p.Disallowed != disallowed || (p.Label("train-ai").Usage == policy.UsageAllowed) == disallowed {
			t.Errorf("%s: %+v, want disallowed=%v", path, p, disallowed)
		}
	}
}

// TestPreferenceLines checks what a parsed file keeps of each line: its
// group, path, value and line number, and Directive and String.
func TestPreferenceLines(t *testing.T) {
	r := policy.Parse([]byte("Content-Signal: search=yes\nUser-agent: a\nDisallow: /x\nContent-Usage: /p train-ai=n # why\nContent-Signal: ai-train=no\n"))
	if got := r.ContentSignals(); len(got) != 1 || got[0].Line != 1 || got[0].Usage("search") != policy.UsageAllowed {
		t.Errorf("ContentSignals() = %+v", got)
	}
	g := r.Groups()[0].Preferences
	if len(g) != 2 {
		t.Fatalf("group preferences = %+v", g)
	}
	if g[0].Path != "/p" || g[0].Value != "train-ai=n" || g[0].Line != 4 || g[0].Source != policy.SourceContentUsage {
		t.Errorf("Content-Usage line = %+v", g[0])
	}
	if got := g[0].String(); got != "Content-Usage: /p train-ai=n (line 4)" {
		t.Errorf("String() = %q", got)
	}
	if got := g[1].Directive(); got != "Content-Signal: ai-train=no" {
		t.Errorf("Directive() = %q", got)
	}
	if g[1].Usage("train-ai") != policy.UsageDisallowed || g[1].Usage("nope") != policy.UsageUnknown {
		t.Errorf("Usage: %+v", g[1])
	}
}

// TestPreferenceWarnings checks the lint findings of both lines: a
// warning for a malformed value, a note saying what to write for a
// dropped label or a yes/no spelt the other line's way, and that neither
// field is reported as unknown any more.
func TestPreferenceWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		sev        policy.Severity
		want       string // in the message; "" for no finding
	}{
		{"valid Content-Usage", "Content-Usage: train-ai=n, search=y", 0, ""},
		{"valid Content-Signal", "Content-Signal: search=yes, ai-input=no, ai-train=no", 0, ""},
		{"dictionary fails", "Content-Usage: train-ai=n,", policy.SeverityWarning, "not a Structured Fields Dictionary"},
		{"upper case", "Content-Usage: Train-AI=n", policy.SeverityWarning, "lower case"},
		{"capitals, not what is wrong", "Content-Usage: train-ai=:Y!==:", policy.SeverityWarning, "write label=value pairs"},
		{"empty", "Content-Usage:", policy.SeverityWarning, "states no preference"},
		{"bad path", "Content-Usage: /a%zz train-ai=n", policy.SeverityWarning, "% not followed"},
		{"non-token value", `Content-Usage: train-ai="n"`, policy.SeverityWarning, "write train-ai=y or train-ai=n"},
		{"other token", "Content-Usage: train-ai=maybe", policy.SeverityWarning, "y or n"},
		{"yes in Content-Usage", "Content-Usage: train-ai=yes", policy.SeverityNote, "write train-ai=y"},
		{"no in Content-Usage", "Content-Usage: search=no", policy.SeverityNote, "write search=n"},
		{"dropped train-genai", "Content-Usage: train-genai=n", policy.SeverityNote, "dropped from the AI preference vocabulary"},
		{"dropped bots", "Content-Usage: bots=n", policy.SeverityNote, "dropped"},
		{"signal key in Content-Usage", "Content-Usage: ai-train=n", policy.SeverityNote, "write train-ai"},
		{"unknown label", "Content-Usage: foo=n", policy.SeverityNote, "not in the AI preference vocabulary"},
		{"y in Content-Signal", "Content-Signal: ai-train=n", policy.SeverityNote, "write ai-train=no"},
		{"label in Content-Signal", "Content-Signal: train-ai=no", policy.SeverityNote, "write ai-train=no"},
		{"pair without =", "Content-Signal: search", policy.SeverityWarning, "not key=yes or key=no"},
		{"bad value", "Content-Signal: search=maybe", policy.SeverityWarning, "neither yes nor no"},
		{"empty signal", "Content-Signal:", policy.SeverityWarning, "empty Content-Signal"},
		{"signal path", "Content-Signal: /x search=no", policy.SeverityWarning, "no path"},
		{"unknown signal key", "Content-Signal: ai-foo=no", policy.SeverityNote, "not one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := policy.Parse([]byte("User-agent: *\n" + tc.line + "\n"))
			ws := r.Warnings()
			if tc.want == "" {
				if len(ws) != 0 {
					t.Errorf("warnings %v, want none", ws)
				}
				return
			}
			if !slices.ContainsFunc(ws, func(w policy.Warning) bool {
				return w.Line == 2 && w.Severity == tc.sev && strings.Contains(w.Message, tc.want)
			}) {
				t.Errorf("warnings %v, want a %s on line 2 with %q", ws, tc.sev, tc.want)
			}
			for _, w := range ws {
				if strings.Contains(w.Message, "unknown field") || strings.Contains(w.Message, "not part of RFC 9309") {
					t.Errorf("still reported as unknown: %v", w)
				}
			}
		})
	}
	r := policy.Parse([]byte("Content-Usage: train-ai=n\nUser-agent: *\n"))
	if ws := r.Warnings(); len(ws) != 1 || ws[0].Severity != policy.SeverityError || ws[0].Line != 1 {
		t.Errorf("Content-Usage before any group: %v, want one error on line 1", ws)
	}
}

// TestHeaderPreferences checks the Content-Usage response header
// (draft-ietf-aipref-attach-05 section 2) and its combining with the
// robots.txt answer: the most restrictive per label.
func TestHeaderPreferences(t *testing.T) {
	h := policy.HeaderPreferences("train-ai=n", "search=y")
	if h.Label("train-ai").Usage != policy.UsageDisallowed || h.Label("search").Usage != policy.UsageAllowed {
		t.Fatalf("two field lines: %v", h)
	}
	if f := h.Label("train-ai").From; len(f) != 1 || f[0].Source != policy.SourceHeader || f[0].String() != "Content-Usage header: train-ai=n, search=y" {
		t.Errorf("From = %+v", f)
	}
	if got := policy.HeaderPreferences("train-ai=n,").String(); got != "train-ai=unknown search=unknown ai-input=unknown" {
		t.Errorf("malformed header: %s", got)
	}
	if got := policy.HeaderPreferences("ai-input=n").String(); got != "train-ai=unknown search=unknown ai-input=unknown" {
		t.Errorf("ai-input is no AIPREF label: %s", got)
	}
	r := policy.Parse([]byte("User-agent: *\nContent-Usage: train-ai=y, search=n\nContent-Signal: ai-input=no\n"))
	c := r.Preferences("/", "bot").Combine(h)
	if c.String() != "train-ai=n search=n ai-input=n" {
		t.Errorf("combined: %s", c)
	}
	if f := c.Label("train-ai").From; len(f) != 1 || f[0].Source != policy.SourceHeader {
		t.Errorf("train-ai from %+v, want the header", f)
	}
	if f := c.Label("search").From; len(f) != 1 || f[0].Line != 2 {
		t.Errorf("search from %+v, want line 2", f)
	}
	y := policy.HeaderPreferences("train-ai=y").Combine(policy.Parse([]byte("User-agent: *\nContent-Usage: train-ai=y\n")).Preferences("/"))
	if f := y.Label("train-ai").From; y.Label("train-ai").Usage != policy.UsageAllowed || len(f) != 2 {
		t.Errorf("both y: %+v", y.Label("train-ai"))
	}
}

// TestPreferencesNone checks that a file without either line, a nil
// Robots and the zero Agent report every label unknown.
func TestPreferencesNone(t *testing.T) {
	var nilRobots *policy.Robots
	for name, p := range map[string]policy.Preferences{
		"plain file": policy.Parse([]byte("User-agent: *\nDisallow: /x\n")).Preferences("/", "bot"),
		"nil Robots": nilRobots.Preferences("/", "bot"),
		"zero Agent": policy.Agent{}.Preferences("/"),
	} {
		if p.String() != "train-ai=unknown search=unknown ai-input=unknown" || p.Disallowed {
			t.Errorf("%s: %v", name, p)
		}
	}
}

// FuzzPreferences checks on any file and path that the answer has one
// preference per label, that every line it names states that answer and
// is a line of the file, and that it agrees with Allowed.
func FuzzPreferences(f *testing.F) {
	f.Add([]byte(attachExample), "/ai-ok/x")
	f.Add([]byte(cloudflareExample), "/")
	f.Add([]byte("Content-Signal: ai-train=no\nUser-agent: *\nContent-Usage: /a* train-ai=y,search=(n)\nDisallow: /b\n"), "/a/../b")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		r := policy.Parse(data)
		p := r.Preferences(path, "bot")
		if len(p.Labels) != 3 || p.Disallowed == r.Allowed(path, "bot") {
			t.Fatalf("%+v for %q", p, path)
		}
		for _, l := range p.Labels {
			if (l.Usage == policy.UsageUnknown) != (len(l.From) == 0) {
				t.Fatalf("%s=%s from %+v", l.Label, l.Usage, l.From)
			}
			for _, from := range l.From {
				if from.Usage(l.Label) != l.Usage || from.Line < 1 || from.Line > r.Lines() {
					t.Fatalf("%s=%s from %+v", l.Label, l.Usage, from)
				}
				if from.Source == policy.SourceContentUsage && p.Disallowed {
					t.Fatalf("Content-Usage %+v on a disallowed path", from)
				}
			}
		}
	})
}

// ExampleRobots_Preferences reads the example of draft-ietf-aipref-attach
// section 3.4: each path's train-ai preference, with its line.
func ExampleRobots_Preferences() {
	r := policy.Parse([]byte(`User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
`))
	for _, path := range []string{"/test", "/never/test", "/ai-ok/test"} {
		p := r.Preferences(path, "ExampleBot").Label("train-ai")
		fmt.Print(path, ": train-ai=", p.Usage)
		for _, l := range p.From {
			fmt.Print(" by ", l)
		}
		fmt.Println()
	}
	// Output:
	// /test: train-ai=n by Content-Usage: train-ai=n (line 4)
	// /never/test: train-ai=unknown
	// /ai-ok/test: train-ai=y by Content-Usage: /ai-ok/ train-ai=y (line 5)
}

// ExampleHeaderPreferences combines a page's Content-Usage header with
// the robots.txt preferences for its URL: the most restrictive wins.
func ExampleHeaderPreferences() {
	site := policy.Parse([]byte("User-agent: *\nContent-Signal: search=yes, ai-train=yes\n"))
	page := policy.HeaderPreferences("train-ai=n")
	fmt.Println(site.Preferences("/article", "ExampleBot").Combine(page))
	// Output:
	// train-ai=n search=y ai-input=unknown
}

// TestPreferenceWarningsBounded checks that a line of many bad members
// costs one warning and one note, not one each: a hostile file must not
// hold many times its size in messages.
func TestPreferenceWarningsBounded(t *testing.T) {
	var usage, signal strings.Builder
	usage.WriteString("train-ai=maybe, search=?1")
	for i := range 1000 {
		fmt.Fprintf(&usage, ", k%d=n", i)
		fmt.Fprintf(&signal, "k%d=no,", i)
	}
	signal.WriteString("search=maybe,a,b")
	r := policy.Parse([]byte("User-agent: *\nContent-Usage: " + usage.String() + "\nContent-Signal: " + signal.String() + "\n"))
	ws := r.Warnings()
	if len(ws) != 4 {
		t.Fatalf("%d warnings, want one warning and one note per line: %v", len(ws), ws)
	}
	for _, w := range ws {
		if len(w.Message) > 200 || !strings.Contains(w.Message, "more like it on this line") {
			t.Errorf("%v", w)
		}
	}
}

// TestPreferencesEveryForm checks that a URL's preferences are those of
// every form a server may serve for it, the most restrictive per label,
// with the form named; that PreferencesLiteral reads the path alone; and
// that OptedOut refuses only when one form says "n" for every purpose.
func TestPreferencesEveryForm(t *testing.T) {
	r := policy.Parse([]byte("User-agent: *\nContent-Usage: /ai/ train-ai=n\nContent-Usage: /public/ train-ai=y, search=n\nContent-Usage: /news/ search=n, train-ai=y\n"))
	a := r.Agent("ExampleBot")
	for _, tc := range []struct {
		path, want, resolved string
	}{
		{"/ai/x", "n", ""},
		{"/public/../ai/x", "n", "/ai/x"},
		{"/public/%2e%2e/ai/x", "n", "/ai/x"},
		{"/public/./../ai/x", "n", "/ai/x"},
		{"//ai/x", "n", "/ai/x"},
		{"/public//../ai/x", "n", "/ai/x"},
		{"/public/..%2fai/x", "n", "/ai/x"},
		{"/public/x", "y", ""},
		{"/public/a%2Fb", "y", ""},
		{"/ai/../public/x", "n", ""},
	} {
		p := a.Preferences(tc.path).Label("train-ai")
		if p.Usage.String() != tc.want || p.Resolved != tc.resolved || len(p.From) != 1 || p.From[0].Line != map[string]int{"n": 2, "y": 3}[tc.want] {
			t.Errorf("Preferences(%q) train-ai = %s resolved %q from %v; want %s resolved %q", tc.path, p.Usage, p.Resolved, p.From, tc.want, tc.resolved)
		}
	}
	if p := a.PreferencesLiteral("/public/../ai/x").Label("train-ai"); p.Usage != policy.UsageAllowed || p.Resolved != "" {
		t.Errorf("PreferencesLiteral(/public/../ai/x) train-ai = %s resolved %q; want y read literally", p.Usage, p.Resolved)
	}
	for _, tc := range []struct {
		path     string
		purposes []string
		out      bool
		resolved string
	}{
		{"/public/../ai/x", []string{"train-ai"}, true, "/ai/x"},
		{"/ai/x", []string{"train-ai"}, true, ""},
		{"/public/x", []string{"train-ai"}, false, ""},
		{"/public/x", []string{"search"}, true, ""},
		// train-ai is n in one form and search in the other: each form's
		// content may be used for one of the purposes.
		{"/public/../ai/x", []string{"train-ai", "search"}, false, ""},
		{"/news/../public/x", []string{"search", "train-ai"}, false, ""},
		{"/ai/x", nil, false, ""},
	} {
		p, out := a.OptedOut(tc.path, tc.purposes...)
		if out != tc.out || p.Resolved != tc.resolved || out && p.Label != tc.purposes[0] {
			t.Errorf("OptedOut(%q, %v) = %+v, %v; want %v resolved %q", tc.path, tc.purposes, p, out, tc.out, tc.resolved)
		}
	}
}

// TestLabelOf checks the spellings a crawler may declare a purpose in:
// a label in any letter case, or Content-Signal's key for it.
func TestLabelOf(t *testing.T) {
	for _, tc := range []struct {
		name, label string
		ok          bool
	}{
		{"train-ai", "train-ai", true},
		{"Train-AI", "train-ai", true},
		{"ai-train", "train-ai", true},
		{"AI-Train", "train-ai", true},
		{" search ", "search", true},
		{"SEARCH", "search", true},
		{"ai-input", "ai-input", true},
		{"train-ia", "", false},
		{"tdm", "", false},
		{"", "", false},
	} {
		if label, ok := policy.LabelOf(tc.name); label != tc.label || ok != tc.ok {
			t.Errorf("LabelOf(%q) = %q, %v; want %q, %v", tc.name, label, ok, tc.label, tc.ok)
		}
	}
	if got := strings.Join(policy.Labels(), " "); got != "train-ai search ai-input" {
		t.Errorf("Labels() = %s", got)
	}
}
