package robots_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

// prefSite is a site whose robots.txt is robotsTxt, whose pages answer
// with the Content-Usage header usage (none when empty), and which
// counts the requests for each path, /robots.txt included.
type prefSite struct {
	*httptest.Server
	mu   sync.Mutex     // protects hits
	hits map[string]int // requests per path, under mu
}

func newPrefSite(t *testing.T, robotsTxt, usage string) *prefSite {
	s := &prefSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robotsTxt)
			return
		}
		if usage != "" {
			w.Header().Set("Content-Usage", usage)
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *prefSite) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// TestPurposes checks that a declared purpose refuses, unsent, a URL whose
// site says "n" for it, by either line, and only when every purpose is
// refused; that the refusal names its label, line and source and is told
// apart from a robots rule; and that a crawler without purposes is
// unaffected.
func TestPurposes(t *testing.T) {
	for _, tc := range []struct {
		name, robots string
		purposes     []string
		path         string
		refused      bool
		source       policy.Source // of a refusal by preference
		line         int
	}{
		{"Content-Usage n", "User-agent: *\nContent-Usage: train-ai=n\n", []string{"train-ai"}, "/a", true, policy.SourceContentUsage, 2},
		{"Content-Signal no", "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\n", []string{"train-ai"}, "/a", true, policy.SourceContentSignal, 3},
		{"file-wide Content-Signal", "Content-Signal: ai-train=no\n\nUser-agent: other\nDisallow: /\n", []string{"train-ai"}, "/a", true, policy.SourceContentSignal, 1},
		{"path-specific n", "User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /no/ train-ai=n\n", []string{"train-ai"}, "/no/x", true, policy.SourceContentUsage, 3},
		{"path-specific y", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /yes/ train-ai=y\n", []string{"train-ai"}, "/yes/x", false, 0, 0},
		{"site says y", "User-agent: *\nContent-Usage: train-ai=y\n", []string{"train-ai"}, "/a", false, 0, 0},
		{"site says nothing", "User-agent: *\nDisallow: /private\n", []string{"train-ai"}, "/a", false, 0, 0},
		{"other label n", "User-agent: *\nContent-Usage: search=n\n", []string{"train-ai"}, "/a", false, 0, 0},
		{"no purpose", "User-agent: *\nContent-Usage: train-ai=n, search=n\n", nil, "/a", false, 0, 0},
		{"one of two purposes n", "User-agent: *\nContent-Usage: train-ai=n, search=y\n", []string{"train-ai", "search"}, "/a", false, 0, 0},
		{"both purposes n", "User-agent: *\nContent-Usage: search=n\nContent-Signal: ai-train=no\n", []string{"train-ai", "search"}, "/a", true, policy.SourceContentSignal, 3},
		{"ai-input purpose", "User-agent: *\nContent-Signal: ai-input=no\n", []string{"ai-input"}, "/a", true, policy.SourceContentSignal, 2},
		{"Content-Signal spelling of the purpose", "User-agent: *\nContent-Signal: ai-train=no\n", []string{"ai-train"}, "/a", true, policy.SourceContentSignal, 2},
		{"purpose in upper case", "User-agent: *\nContent-Usage: train-ai=n\n", []string{"Train-AI"}, "/a", true, policy.SourceContentUsage, 2},
		{"aliases of one purpose", "User-agent: *\nContent-Usage: train-ai=n, search=y\n", []string{"ai-train", "TRAIN-AI", "train-ai"}, "/a", true, policy.SourceContentUsage, 2},
		{"another crawler's group", "User-agent: other\nContent-Usage: train-ai=n\n", []string{"train-ai"}, "/a", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := newPrefSite(t, tc.robots, "")
			tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1, Purposes: tc.purposes})
			client := &http.Client{Transport: tr}
			resp, err := client.Get(site.URL + tc.path)
			if resp != nil {
				resp.Body.Close()
			}
			if !tc.refused {
				if err != nil || site.hit(tc.path) != 1 {
					t.Fatalf("err %v, %d requests; want it sent", err, site.hit(tc.path))
				}
				return
			}
			var de *robots.DisallowedError
			if !errors.Is(err, robots.ErrDisallowed) || !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *DisallowedError", err)
			}
			if site.hit(tc.path) != 0 {
				t.Errorf("refused request was sent")
			}
			if !de.ByPreference() || de.Rule != nil || de.Unreachable {
				t.Errorf("ByPreference %v, Rule %v, Unreachable %v; want a refusal by preference alone", de.ByPreference(), de.Rule, de.Unreachable)
			}
			label, _ := policy.LabelOf(tc.purposes[0])
			if de.Label != label || de.Preference.Source != tc.source || de.Preference.Line != tc.line || de.Token != "ExampleBot" {
				t.Errorf("Label %q, Preference %+v, Token %q; want %s from %s line %d", de.Label, de.Preference, de.Token, label, tc.source, tc.line)
			}
			want := fmt.Sprintf("%s=n by %s", label, de.Preference)
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("(line %d)", tc.line)) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}

// TestUnknownPurpose checks that a purpose no label stands for is a
// configuration error: every request, Check, Preferences and
// ResponsePreferences fail with an error naming it and the labels known,
// nothing is sent, robots.txt included, and the error is logged once.
func TestUnknownPurpose(t *testing.T) {
	site := newPrefSite(t, "User-agent: *\nContent-Signal: ai-train=no\n", "")
	var logged strings.Builder
	tr := robots.NewTransport(nil, robots.Options{
		UserAgent: "ExampleBot", MinDelay: -1, Purposes: []string{"search", "train-ia"},
		Logger: slog.New(slog.NewTextHandler(&logged, nil)),
	})
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, robots.ErrUnknownPurpose) || errors.Is(err, robots.ErrDisallowed) ||
			!strings.Contains(err.Error(), `"train-ia"`) || !strings.Contains(err.Error(), "train-ai, search, ai-input") {
			t.Errorf("%s: err = %v, want ErrUnknownPurpose naming train-ia and the labels known", what, err)
		}
	}
	for _, path := range []string{"/a", "/robots.txt"} {
		resp, err := (&http.Client{Transport: tr}).Get(site.URL + path)
		if resp != nil {
			resp.Body.Close()
		}
		check("GET "+path, err)
	}
	check("Check", tr.Check(ctx, site.URL+"/a"))
	_, err := tr.Preferences(ctx, site.URL+"/a")
	check("Preferences", err)
	req, _ := http.NewRequest("GET", site.URL+"/a", nil)
	_, err = tr.ResponsePreferences(ctx, &http.Response{Request: req, Header: http.Header{}})
	check("ResponsePreferences", err)
	site.mu.Lock()
	if len(site.hits) != 0 {
		t.Errorf("sent: %v", site.hits)
	}
	site.mu.Unlock()
	if n := strings.Count(logged.String(), "train-ia"); n != 1 {
		t.Errorf("the error was logged %d times, want once:\n%s", n, logged.String())
	}
}

// TestPurposesRobotsRuleFirst checks that a URL a robots rule refuses is
// refused by the rule, not by a preference, and still carries the
// site's preferences.
func TestPurposesRobotsRuleFirst(t *testing.T) {
	site := newPrefSite(t, "User-agent: *\nDisallow: /private\nContent-Signal: ai-train=no\n", "")
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot", MinDelay: -1, Purposes: []string{"train-ai"}})
	err := tr.Check(context.Background(), site.URL+"/private")
	var de *robots.DisallowedError
	if !errors.As(err, &de) || de.ByPreference() || de.Rule == nil || de.Label != "" {
		t.Fatalf("err = %v, want a refusal by the Disallow rule", err)
	}
	if de.Preferences == nil || de.Preferences.Label("train-ai").Usage != policy.UsageDisallowed {
		t.Errorf("Preferences = %v, want train-ai=n from the Content-Signal", de.Preferences)
	}
}

// TestTransportPreferences checks that the transport reports a URL's
// preferences without sending it, fetching the robots.txt once.
func TestTransportPreferences(t *testing.T) {
	site := newPrefSite(t, "User-agent: *\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\nUser-agent: ExampleBot\nContent-Usage: search=n\n", "")
	ctx := context.Background()
	for _, tc := range []struct {
		agent, path, want string
		disallowed        bool
	}{
		{"OtherBot", "/test", "train-ai=n search=unknown ai-input=unknown", false},
		{"OtherBot", "/ai-ok/test", "train-ai=y search=unknown ai-input=unknown", false},
		{"OtherBot", "/never/test", "train-ai=unknown search=unknown ai-input=unknown", true},
		{"ExampleBot", "/never/test", "train-ai=unknown search=n ai-input=unknown", false},
	} {
		tr := robots.NewTransport(nil, robots.Options{UserAgent: tc.agent, MinDelay: -1})
		p, err := tr.Preferences(ctx, site.URL+tc.path)
		if err != nil || p.String() != tc.want || p.Disallowed != tc.disallowed {
			t.Errorf("%s %s: %v (disallowed %v), %v; want %s", tc.agent, tc.path, p, p.Disallowed, err, tc.want)
		}
		if site.hit(tc.path) != 0 {
			t.Errorf("%s was requested", tc.path)
		}
	}
	tr := robots.NewTransport(nil, robots.Options{MinDelay: -1})
	if _, err := tr.Preferences(ctx, "/relative"); err == nil {
		t.Error("a relative URL gave no error")
	}
}

// TestResponsePreferences checks that the response-header helper combines
// a page's Content-Usage header with the robots.txt preference for its
// URL, the most restrictive per label winning.
func TestResponsePreferences(t *testing.T) {
	for _, tc := range []struct {
		name, robots, header, want string
		fromHeader                 bool // train-ai's answer came from the header alone
	}{
		{"header n beats robots y", "User-agent: *\nContent-Usage: train-ai=y, search=y\n", "train-ai=n", "train-ai=n search=y ai-input=unknown", true},
		{"robots n beats header y", "User-agent: *\nContent-Usage: train-ai=n\n", "train-ai=y, search=y", "train-ai=n search=y ai-input=unknown", false},
		{"header alone", "User-agent: *\nDisallow: /private\n", "train-ai=n", "train-ai=n search=unknown ai-input=unknown", true},
		{"malformed header states nothing", "User-agent: *\nContent-Signal: ai-train=yes\n", "Train-AI=n", "train-ai=y search=unknown ai-input=unknown", false},
		{"no header", "User-agent: *\nContent-Signal: search=no\n", "", "train-ai=unknown search=n ai-input=unknown", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := newPrefSite(t, tc.robots, tc.header)
			tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot", MinDelay: -1})
			resp, err := (&http.Client{Transport: tr}).Get(site.URL + "/page")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			p, err := tr.ResponsePreferences(context.Background(), resp)
			if err != nil || p.String() != tc.want {
				t.Fatalf("ResponsePreferences = %v, %v; want %s", p, err, tc.want)
			}
			from := p.Label("train-ai").From
			header := len(from) == 1 && from[0].Source == policy.SourceHeader
			if header != tc.fromHeader {
				t.Errorf("train-ai from %+v; from the header alone: %v, want %v", from, header, tc.fromHeader)
			}
		})
	}
	tr := robots.NewTransport(nil, robots.Options{})
	if _, err := tr.ResponsePreferences(context.Background(), &http.Response{}); err == nil {
		t.Error("a response without a request gave no error")
	}
}

// TestResponsePreferencesEveryLine checks that a response's preference
// combines every Content-Usage field line, as HTTP combines repeated
// fields (RFC 9110 section 5.3): train-ai=n on the second line counts.
func TestResponsePreferencesEveryLine(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Add("Content-Usage", "search=y")
		w.Header().Add("Content-Usage", "train-ai=n")
		io.WriteString(w, "page")
	}))
	t.Cleanup(site.Close)
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot", MinDelay: -1})
	resp, err := (&http.Client{Transport: tr}).Get(site.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p, err := tr.ResponsePreferences(context.Background(), resp)
	if err != nil || p.String() != "train-ai=n search=y ai-input=unknown" {
		t.Fatalf("ResponsePreferences = %v, %v; want train-ai=n search=y ai-input=unknown", p, err)
	}
	if from := p.Label("train-ai").From; len(from) != 1 || from[0].Value != "search=y, train-ai=n" {
		t.Errorf("train-ai from %+v, want the header's two lines combined", from)
	}
}

// ExampleTransport_Preferences declares a crawler's purpose: a URL whose
// site says train-ai=n is refused before it is sent, and the preferences
// of the others can be read without sending them.
func ExampleTransport_Preferences() {
	site := newSite(http.StatusOK, "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n")
	defer site.Close()
	tr := robots.NewTransport(nil, robots.Options{
		UserAgent: "ExampleBot/1.0",
		MinDelay:  -1,
		Purposes:  []string{"train-ai"},
	})
	client := &http.Client{Transport: tr}

	_, err := client.Get(site.URL + "/article")
	var de *robots.DisallowedError
	if errors.As(err, &de) && de.ByPreference() {
		fmt.Println(de.Label, "refused by", de.Preference.Source, "on line", de.Preference.Line)
	}
	p, _ := tr.Preferences(context.Background(), site.URL+"/open/data")
	fmt.Println(p.Label("train-ai").Usage, "for /open/data")
	// Output:
	// train-ai refused by Content-Usage on line 2
	// y for /open/data
}

// ExampleTransport_ResponsePreferences tags a fetched page with what its
// site prefers: the page's Content-Usage header and the robots.txt line
// for its URL, the most restrictive per label.
func ExampleTransport_ResponsePreferences() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nContent-Signal: search=yes, ai-train=yes\n")
			return
		}
		w.Header().Set("Content-Usage", "train-ai=n")
		io.WriteString(w, "a page")
	}))
	defer site.Close()
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1})
	resp, err := (&http.Client{Transport: tr}).Get(site.URL + "/page")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	p, _ := tr.ResponsePreferences(context.Background(), resp)
	for _, l := range p.Labels {
		fmt.Print(l.Label, "=", l.Usage)
		for _, f := range l.From {
			fmt.Print(" by ", f)
		}
		fmt.Println()
	}
	// Output:
	// train-ai=n by Content-Usage header: train-ai=n
	// search=y by Content-Signal: search=yes, ai-train=yes (line 2)
	// ai-input=unknown
}

// spellings are seven ways of writing a request for /ai/x that a server
// serves as /ai/x: as written, with dot segments ("%2E" too), with
// repeated slashes merged first, and with "%2F" decoded.
var spellings = []string{
	"/ai/x",
	"/public/../ai/x",
	"/public/%2e%2e/ai/x",
	"/public/./../ai/x",
	"//ai/x",
	"/public//../ai/x",
	"/public/..%2fai/x",
}

// TestPurposesEveryForm checks that an AI usage opt-out holds for every
// spelling of a URL that a server serves as the opted-out path, as a
// Disallow rule does: each is refused unsent by preference, the error
// naming the form refused, and Preferences reports "n" for each.
func TestPurposesEveryForm(t *testing.T) {
	ctx := context.Background()
	t.Run("Content-Usage", func(t *testing.T) {
		site := newPrefSite(t, "User-agent: *\nContent-Usage: /ai/ train-ai=n\nContent-Usage: /public/ train-ai=y\n", "")
		tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1, Purposes: []string{"train-ai"}})
		client := &http.Client{Transport: tr}
		for _, path := range spellings {
			resp, err := client.Get(site.URL + path)
			if resp != nil {
				resp.Body.Close()
			}
			var de *robots.DisallowedError
			if !errors.As(err, &de) || !de.ByPreference() {
				t.Errorf("GET %s: err = %v, want a refusal by preference", path, err)
				continue
			}
			if de.Preference.Line != 2 {
				t.Errorf("GET %s: refused by %v, want line 2", path, de.Preference)
			}
			if path != "/ai/x" && (de.Resolved != "/ai/x" || !strings.Contains(err.Error(), "(resolved as /ai/x)")) {
				t.Errorf("GET %s: Resolved %q, error %q; want the form /ai/x named", path, de.Resolved, err)
			}
			p, err := tr.Preferences(ctx, site.URL+path)
			if err != nil || p.Label("train-ai").Usage != policy.UsageDisallowed {
				t.Errorf("Preferences(%s) = %v, %v; want train-ai=n", path, p, err)
			}
		}
		site.mu.Lock()
		defer site.mu.Unlock()
		if len(site.hits) != 1 {
			t.Errorf("sent: %v; want /robots.txt alone", site.hits)
		}
	})
	t.Run("Disallow", func(t *testing.T) {
		site := newPrefSite(t, "User-agent: *\nDisallow: /ai/\nAllow: /public/\n", "")
		tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1, Purposes: []string{"train-ai"}})
		client := &http.Client{Transport: tr}
		for _, path := range spellings {
			resp, err := client.Get(site.URL + path)
			if resp != nil {
				resp.Body.Close()
			}
			var de *robots.DisallowedError
			if !errors.As(err, &de) || de.Rule == nil || de.Rule.Line != 2 {
				t.Errorf("GET %s: err = %v, want a refusal by Disallow: /ai/", path, err)
			}
		}
		site.mu.Lock()
		defer site.mu.Unlock()
		if len(site.hits) != 1 {
			t.Errorf("sent: %v; want /robots.txt alone", site.hits)
		}
	})
}
