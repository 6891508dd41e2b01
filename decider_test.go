package robots

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawlkit/robots/policy"
)

// TestDotSegments checks that a path whose dot segments resolve to a
// disallowed path is refused, whatever its spelling.
func TestDotSegments(t *testing.T) {
	s := newSite(t, serve(200, privateRobots))
	tr := newTestTransport(t, newClock(), Options{})
	for _, tc := range []struct {
		path     string
		resolved string // empty: allowed
	}{
		{"/public/../private", "/private"},
		{"/public/%2e%2E/private/x?y=1", "/private/x?y=1"},
		{"/public/.%2E/private", "/private"},
		{"/public/./../private", "/private"},
		{"/public/./page", ""},
		{"/a/b/../../public", ""},
		{"/public/..%2fprivate", "/private"}, // a server that decodes %2F first serves /private
	} {
		t.Run(tc.path, func(t *testing.T) {
			err := tr.Check(context.Background(), s.URL+tc.path)
			var de *DisallowedError
			switch {
			case tc.resolved == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.resolved != "" && (!errors.As(err, &de) || de.Resolved != tc.resolved):
				t.Errorf("Check = %v, want refused as %s", err, tc.resolved)
			}
		})
	}
}

// TestRobotsTxtAlwaysAllowed checks that a request for /robots.txt itself
// goes through even when the file disallows everything.
func TestRobotsTxtAlwaysAllowed(t *testing.T) {
	s := newSite(t, serve(200, "User-agent: *\nDisallow: /\n"))
	tr := newTestTransport(t, newClock(), Options{})
	if body, err := get(t, tr, s.URL+"/robots.txt"); err != nil || !strings.Contains(body, "Disallow: /") {
		t.Errorf("GET /robots.txt = %q, %v", body, err)
	}
	if err := tr.Check(context.Background(), s.URL+"/robots.txt"); err != nil {
		t.Errorf("Check(/robots.txt) = %v", err)
	}
	if err := tr.Check(context.Background(), s.URL+"/other"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("Check(/other) = %v, want refused", err)
	}
}

// TestUserAgentAndTokens checks that the User-Agent is sent on robots.txt
// fetches and on requests carrying none, and that the product token or the
// explicit Agents select the groups.
func TestUserAgentAndTokens(t *testing.T) {
	const robots = "User-agent: examplebot\nDisallow: /bot\n\nUser-agent: ExampleBot-Image\nDisallow: /image\n\nUser-agent: *\nDisallow: /\n"
	var robotsUA, pageUA atomic.Value
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		robotsUA.Store(r.Header.Get("User-Agent"))
		io.WriteString(w, robots)
	})
	s.setPages(func(w http.ResponseWriter, r *http.Request) { pageUA.Store(r.Header.Get("User-Agent")) })
	const ua = "ExampleBot/1.0 (+https://example.com/bot)"
	tr := newTestTransport(t, newClock(), Options{UserAgent: ua})
	req, _ := http.NewRequest("GET", s.URL+"/page", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if robotsUA.Load() != ua || pageUA.Load() != ua {
		t.Errorf("User-Agent %v on the robots.txt fetch, %v on the page; want %q", robotsUA.Load(), pageUA.Load(), ua)
	}
	if _, ok := req.Header["User-Agent"]; ok {
		t.Errorf("the caller's request was given a User-Agent")
	}
	req.Header.Set("User-Agent", "Other/2")
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if pageUA.Load() != "Other/2" {
		t.Errorf("the request's own User-Agent was replaced by %v", pageUA.Load())
	}
	ctx := context.Background()
	if tr.Check(ctx, s.URL+"/bot") == nil || tr.Check(ctx, s.URL+"/image") != nil {
		t.Errorf("UserAgent token: want /bot refused and /image allowed by the examplebot group")
	}
	tr2 := newTestTransport(t, newClock(), Options{UserAgent: ua, Agents: []string{"ExampleBot-Image", "ExampleBot"}})
	if tr2.Check(ctx, s.URL+"/image") == nil || tr2.Check(ctx, s.URL+"/bot") != nil {
		t.Errorf("Agents: want /image refused and /bot allowed by the ExampleBot-Image group")
	}
	tr3 := newTestTransport(t, newClock(), Options{UserAgent: "OtherBot"})
	if err := tr3.Check(ctx, s.URL+"/page"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("a token without a group: %v, want the * group to refuse", err)
	}
}

// TestRobotsTxtWhateverTheQuery checks that the transport, like the
// policy, lets a request for /robots.txt through on its normalised path
// whatever its query (RFC 9309 section 2.2.2 and docs/matching.md), even when the rules refuse everything or
// the robots.txt is unreachable and every other request is refused.
func TestRobotsTxtWhateverTheQuery(t *testing.T) {
	tests := []struct {
		name   string
		status int // of /robots.txt when fetched without a query
		body   string
	}{
		{"rules refuse everything", http.StatusOK, "User-agent: *\nDisallow: /\n"},
		{"robots.txt unreachable", http.StatusServiceUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" && r.URL.RawQuery == "" {
					w.WriteHeader(tt.status)
				}
				io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			tr := NewTransport(srv.Client().Transport, Options{UserAgent: "QueryBot/1.0", MinDelay: -1})
			client := &http.Client{Transport: tr}
			for _, uri := range []string{"/robots.txt?x=1", "/%72obots.txt?x=1", "/robots.txt"} {
				if !policy.Parse([]byte(tt.body)).Allowed(uri, "QueryBot") {
					t.Errorf("policy refuses %s", uri)
				}
				if err := tr.Check(context.Background(), srv.URL+uri); err != nil {
					t.Errorf("Check(%s) = %v, want nil", uri, err)
				}
				resp, err := client.Get(srv.URL + uri)
				if err != nil {
					t.Errorf("GET %s: %v", uri, err)
					continue
				}
				resp.Body.Close()
			}
			if _, err := client.Get(srv.URL + "/robots.txt/x"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("GET /robots.txt/x: %v, want ErrDisallowed", err)
			}
		})
	}
}
