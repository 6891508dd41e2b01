package robots

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestStatsRefusalsByKind checks that a crawl's refusals are counted
// apart by kind: a rule's, an unreachable robots.txt's and an AI usage
// preference's, with Refused their total.
func TestStatsRefusalsByKind(t *testing.T) {
	rules := newSite(t, serve(200, privateRobots))
	down := newSite(t, serve(503, ""))
	prefs := newSite(t, serve(200, "User-agent: *\nDisallow: /private\nContent-Usage: /ai/ train-ai=n\n"))
	tr := newTestTransport(t, newClock(), Options{Purposes: []string{"train-ai"}})
	crawl := []struct {
		url  string
		kind string // of refusal; "" for allowed
	}{
		{rules.URL + "/a", ""},
		{rules.URL + "/private/1", "rule"},
		{rules.URL + "/private/2", "rule"},
		{down.URL + "/a", "unreachable"},
		{prefs.URL + "/ai/page", "preference"},
		{prefs.URL + "/private/ai", "rule"},
		{prefs.URL + "/b", ""},
	}
	for _, c := range crawl {
		_, err := get(t, tr, c.url)
		var de *DisallowedError
		if c.kind == "" {
			if err != nil {
				t.Errorf("%s: %v, want allowed", c.url, err)
			}
			continue
		}
		if !errors.As(err, &de) {
			t.Fatalf("%s: %v, want a *DisallowedError", c.url, err)
		}
		if got := refusalKind(de); got != c.kind {
			t.Errorf("%s: refused by %s, want %s", c.url, got, c.kind)
		}
	}
	st := tr.Stats()
	got := [...]int64{st.Allowed, st.Refused, st.RefusedByRule, st.RefusedUnreachable, st.RefusedByPreference}
	if want := [...]int64{2, 5, 3, 1, 1}; got != want {
		t.Errorf("Allowed, Refused, RefusedByRule, RefusedUnreachable, RefusedByPreference = %v, want %v", got, want)
	}
}

// refusalKind names the kind of refusal e is, as the test's crawl lists
// them.
func refusalKind(e *DisallowedError) string {
	switch {
	case e.Rule != nil:
		return "rule"
	case e.Preference != nil:
		return "preference"
	case e.Unreachable:
		return "unreachable"
	}
	return "unknown"
}

// TestStatsWaiting checks that Stats.Waiting counts the requests asleep
// until their politeness slot while they sleep, and none after, and that
// Stats.Waited adds up the time they slept.
func TestStatsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newBubbleTransport(newFakeSite(nil), Options{MinDelay: time.Second})
		if _, err := bubbleGet(t, tr, "http://waits.example/first"); err != nil {
			t.Fatal(err)
		}
		if n := tr.Stats().Waiting; n != 0 {
			t.Fatalf("Waiting %d with nothing waiting, want 0", n)
		}
		done := make(chan error, 2)
		for _, p := range []string{"/w1", "/w2"} {
			go func() {
				_, err := bubbleGet(t, tr, "http://waits.example"+p)
				done <- err
			}()
		}
		synctest.Wait()
		if n := tr.Stats().Waiting; n != 2 {
			t.Fatalf("Waiting %d with two requests asleep, want 2", n)
		}
		for range 2 {
			if err := bubbleRecv(t, done, "a waiter's answer"); err != nil {
				t.Fatal(err)
			}
		}
		if n := tr.Stats().Waiting; n != 0 {
			t.Errorf("Waiting %d after the requests were sent, want 0", n)
		}
		// One waited a second, the other two.
		if w := tr.Stats().Waited; w != 3*time.Second {
			t.Errorf("Waited %v, want 3s, the time the requests slept", w)
		}
	})
}

// TestStatsStoreErrors checks that Stats.StoreErrors counts the calls a
// Fleet failed, and not those of a request whose context had ended.
func TestStatsStoreErrors(t *testing.T) {
	c := newClock()
	store := &fleetStub{fleetStore: newFleetStore(), clock: c, members: 1}
	tr := NewTransport(&sendLog{clock: c}, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: store, Now: c.Now, Sleep: c.Sleep})
	if _, err := getWithin(t, tr, "http://fleet.example/up"); err != nil {
		t.Fatal(err)
	}
	if n := tr.Stats().StoreErrors; n != 0 {
		t.Fatalf("StoreErrors %d with the store up, want 0", n)
	}
	store.down.Store(true)
	for _, p := range []string{"/down1", "/down2"} {
		if _, err := getWithin(t, tr, "http://fleet.example"+p); err != nil {
			t.Fatal(err)
		}
	}
	// Each request failed to reserve its slot in the store; one waiting
	// alone may also have asked the store in vain whether it is back.
	failed := tr.Stats().StoreErrors
	if failed < 2 {
		t.Errorf("StoreErrors %d after two slots the store failed to reserve, want at least 2", failed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://fleet.example/canceled", nil)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("a request whose context had ended was sent")
	}
	if n := tr.Stats().StoreErrors; n != failed {
		t.Errorf("StoreErrors %d after a canceled request, want still %d", n, failed)
	}
}

// TestOrigin checks that Transport.Origin names a URL's origin as the
// transport keys it: every spelling of one origin the same, the scheme's
// default port left out, an IDN host in ASCII, and a clear error for a
// URL robots.txt does not govern.
func TestOrigin(t *testing.T) {
	tr := NewTransport(nil, Options{})
	for _, tc := range []struct {
		url, want, err string
	}{
		{"http://site.example/a", "http://site.example", ""},
		{"HTTPS://Site.Example:443/a?q", "https://site.example", ""},
		{"http://site.example:80/", "http://site.example", ""},
		{"http://site.example.:8080/x", "http://site.example:8080", ""},
		{"https://bücher.example/", "https://xn--bcher-kva.example", ""},
		{"http://[2001:DB8::1]:80/", "http://[2001:db8::1]", ""},
		{"ftp://site.example/", "", "does not govern"},
		{"/relative/path", "", "no scheme"},
		{"http:///nohost", "", "has no host"},
		{"http://site.example:99999/", "", "invalid port"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.Origin(u)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Origin(%s) = %q, %v; want %q", tc.url, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Origin(%s) = %q, %v; want an error saying %q", tc.url, got, err, tc.err)
		}
	}
	// The key the transport holds the origin under is the same.
	s := newSite(t, serve(200, ""))
	u, _ := url.Parse(strings.Replace(s.URL, "127.0.0.1", "LOCALHOST.", 1) + "/x")
	info, err := tr.Robots(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tr.Origin(u); got != info.Origin {
		t.Errorf("Origin %q, RobotsInfo.Origin %q: want the same", got, info.Origin)
	}
}
