package cases

import (
	"reflect"
	"strings"
	"testing"

	"github.com/crawlkit/robots/internal/target"
	"github.com/crawlkit/robots/policy"
)

// TestRead checks the CSV format of the conformance README and its errors.
func TestRead(t *testing.T) {
	tests := []struct {
		name, csv string
		want      int    // cases read
		err       string // part of the error, "" for none
	}{
		{"header and rows", "agent,url,expected,note\nbot,/a,allowed,n\nbot,/b,disallowed,\n", 2, ""},
		{"columns in any order, no note", "url,expected,agent\n/a,allowed,bot\n", 1, ""},
		{"BOM before the header", "\ufeffagent,url,expected\nbot,/a,allowed\n", 1, ""},
		{"missing column", "agent,url\nbot,/a\n", 0, `no "expected" column`},
		{"empty file", "", 0, "reading header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := Read(strings.NewReader(tt.csv))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Read: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Read error = %v, want one containing %q", err, tt.err)
			case len(cs) != tt.want:
				t.Errorf("read %d cases, want %d", len(cs), tt.want)
			}
		})
	}
}

// TestReadLines checks that each case keeps the line its row starts on in
// the file, which the runner prints, past a note spanning two lines and a
// blank line.
func TestReadLines(t *testing.T) {
	cs, err := Read(strings.NewReader("agent,url,expected,note\nbot,/a,allowed,\"two\nlines\"\n\nbot,/b,disallowed,\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{Agent: "bot", URL: "/a", Expected: true, Note: "two\nlines", Line: 2},
		{Agent: "bot", URL: "/b", Expected: false, Line: 5},
	}
	if len(cs) != len(want) {
		t.Fatalf("read %d cases, want %d", len(cs), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(cs[i], want[i]) {
			t.Errorf("case %d = %+v, want %+v", i, cs[i], want[i])
		}
	}
}

// TestRun checks that each case is decided as the transport would, in
// the order given, one result per case, and that an unreadable URL fails
// its case rather than the run.
func TestRun(t *testing.T) {
	r := policy.Parse([]byte("User-agent: *\nDisallow: /private\n"))
	tests := []struct {
		c       Case
		allowed bool // the decision
		line    int  // the deciding rule's line, 0 for none
		passed  bool
		err     bool
	}{
		{Case{Agent: "bot", URL: "/private/x", Expected: false, Line: 2}, false, 2, true, false},
		{Case{Agent: "bot", URL: "https://e.example/public/../private", Expected: false, Line: 3}, false, 2, true, false},
		{Case{Agent: "bot", URL: "/public", Expected: false, Line: 4}, true, 0, false, false},
		{Case{Agent: "bot", URL: "/public#frag", Expected: true, Line: 5}, true, 0, true, false},
		{Case{Agent: "bot", URL: "ftp://e.example/", Expected: true, Line: 6}, false, 0, false, true},
	}
	cs := make([]Case, len(tests))
	for i, tt := range tests {
		cs[i] = tt.c
	}
	got := Run(r, cs)
	if len(got) != len(tests) {
		t.Fatalf("Run returned %d results for %d cases", len(got), len(tests))
	}
	for i, tt := range tests {
		res := got[i]
		if !reflect.DeepEqual(res.Case, tt.c) {
			t.Errorf("result %d is for case %+v, want %+v", i, res.Case, tt.c)
		}
		if (res.Err != nil) != tt.err {
			t.Errorf("case %d (%s): err = %v, want an error: %v", i, tt.c.URL, res.Err, tt.err)
		}
		if res.Err == nil && (res.Decision.Allowed != tt.allowed || res.Decision.Rule.Line != tt.line) {
			t.Errorf("case %d (%s): decision %v (rule line %d), want allowed %v by line %d", i, tt.c.URL, res.Decision, res.Decision.Rule.Line, tt.allowed, tt.line)
		}
		if res.Passed() != tt.passed {
			t.Errorf("case %d (%s): passed = %v, want %v", i, tt.c.URL, res.Passed(), tt.passed)
		}
	}
}

// TestRunReadsTheProductToken: an agent cell is read as the transport
// reads a User-Agent, its product token, so that a row naming
// "Googlebot/2.1" checks Googlebot's group, not the * groups.
func TestRunReadsTheProductToken(t *testing.T) {
	r := policy.Parse([]byte("User-agent: Googlebot\nAllow: /\n\nUser-agent: *\nDisallow: /\n"))
	for _, tt := range []struct {
		agent   string
		allowed bool
	}{
		{"Googlebot", true},
		{"Googlebot/2.1", true},
		{" Googlebot ", true},
		{"googlebot/2.1 (+http://www.google.com/bot.html)", true},
		{"*", false},
		{"OtherBot/1.0", false},
		{"ü-bot", false}, // no product token: a crawler no group names
	} {
		got := Run(r, []Case{{Agent: tt.agent, URL: "/page", Expected: tt.allowed}})[0]
		if got.Decision.Allowed != tt.allowed || !got.Passed() {
			t.Errorf("agent %q: allowed %v, want %v", tt.agent, got.Decision.Allowed, tt.allowed)
		}
	}
}

// TestReadBadRows checks that a row that cannot be run is returned with
// its line and why, and that the rows after it are still read.
func TestReadBadRows(t *testing.T) {
	tests := []struct {
		name, csv string
		line      int    // of the bad row
		why       string // part of its Invalid
	}{
		{"an expectation that is no decision", "agent,url,expected\nbot,/a,maybe\nbot,/b,allowed\n", 2, `expected is "maybe", want allowed or disallowed`},
		{"no agent", "agent,url,expected\n,/a,allowed\nbot,/b,allowed\n", 2, "agent is empty"},
		{"a bare quote", "agent,url,expected\nbot,/a\"b,allowed\nbot,/b,allowed\n", 2, "broken CSV"},
		{"a short row", "agent,url,expected\nbot,/a\nbot,/b,allowed\n", 2, `expected is ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := Read(strings.NewReader(tt.csv))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(cs) != 2 {
				t.Fatalf("read %d rows %+v, want the bad row and the good one", len(cs), cs)
			}
			bad, good := cs[0], cs[1]
			if bad.Line != tt.line || bad.Invalid == nil || !strings.Contains(bad.Invalid.Error(), tt.why) {
				t.Errorf("bad row: line %d, %v; want line %d and %q", bad.Line, bad.Invalid, tt.line, tt.why)
			}
			if good.Invalid != nil || good.URL != "/b" || !good.Expected {
				t.Errorf("good row: %+v", good)
			}
			res := Run(policy.Parse(nil), cs)
			if res[0].Passed() || !res[1].Passed() {
				t.Errorf("passed = %v, %v; want the bad row failed and the good one run", res[0].Passed(), res[1].Passed())
			}
		})
	}
}

// TestPreferenceColumns checks the optional train-ai and search columns:
// read when present, each cell y, n, unknown or empty, and checked
// against the combined preference.
func TestPreferenceColumns(t *testing.T) {
	bad, err := Read(strings.NewReader("agent,url,expected,note,train-ai\nbot,/a,allowed,,maybe\nbot,/b,allowed,,y\n"))
	if err != nil || len(bad) != 2 || bad[0].Line != 2 || bad[0].Invalid == nil ||
		!strings.Contains(bad[0].Invalid.Error(), `train-ai is "maybe"`) || bad[1].Invalid != nil {
		t.Errorf("bad cell: %+v, %v; want row 2 invalid and row 3 read", bad, err)
	}
	cs, err := Read(strings.NewReader("agent,url,expected,note,train-ai,search\n" +
		"bot,/a,allowed,,n,unknown\n" +
		"bot,/a,allowed,,y,\n" +
		"bot,/a,allowed,,,y\n" +
		"bot,/x,disallowed,,unknown,unknown\n" +
		"bot,/b,allowed,,N,\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := policy.Parse([]byte("User-agent: *\nDisallow: /x\nContent-Usage: train-ai=n\n"))
	want := []bool{true, false, false, true, true}
	for i, res := range Run(r, cs) {
		if res.Passed() != want[i] {
			t.Errorf("row %d: passed = %v, want %v (%v, differing %v)", res.Line, res.Passed(), want[i], res.Preferences, res.PreferencesDiffering())
		}
	}
}

// FuzzRead feeds Read any bytes as a cases file, as a user may give the
// command: it never panics or loops, a row it cannot run says why and
// runs to no decision, and every row it can run is decided.
func FuzzRead(f *testing.F) {
	f.Add([]byte("agent,url,expected,note\nbot,/a,allowed,n\nbot,https://site.example/b?x,disallowed,\n"))
	f.Add([]byte("url,expected,agent,content-usage\n/a,allowed,bot,train-ai=n\n\"broken,row\nbot,/c,maybe\n"))
	robots := policy.Parse([]byte("User-agent: *\nDisallow: /b\nContent-Usage: train-ai=n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := Read(strings.NewReader(string(data)))
		if err != nil {
			if cs != nil {
				t.Fatalf("Read failed (%v) and returned %d rows", err, len(cs))
			}
			return
		}
		for i, r := range Run(robots, cs) {
			if r.Invalid != nil && r.Passed() {
				t.Fatalf("row %d cannot run (%v) yet passed", i, r.Invalid)
			}
			if r.Invalid == nil && r.Err == nil && r.Decision.Allowed != robots.Allowed(mustTarget(t, r.URL), r.Agent) {
				t.Fatalf("row %d: decision %+v differs from Allowed", i, r.Decision)
			}
		}
	})
}

func mustTarget(t *testing.T, raw string) string {
	t.Helper()
	path, err := target.Target(raw)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
