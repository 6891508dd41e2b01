package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
		{"http://site.example../x", "http://site.example", ""},
		{"http://bücher.example../", "http://xn--bcher-kva.example", ""},
		{"http://../x", "", "has no host"},
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

// TestStatsPageOutcomes checks what a crawl's pages come to in Stats:
// the answers by status class (a base error as network), the pause a 429
// started, the request that failed at once with a SlotError in it, the
// origins paused and unreachable now, and the Hooks told of every paced
// wait and robots.txt fetch, with how long each took, until removed.
func TestStatsPageOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Host == "down.example" {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			time.Sleep(300 * time.Millisecond) // the fetch takes that long
			io.WriteString(w, allowAll)
		})
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/gone":
				w.WriteHeader(http.StatusNotFound)
			case "/busy":
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "reset.example" && r.URL.Path != "/robots.txt" {
				return nil, errors.New("connection reset")
			}
			return site.RoundTrip(r)
		})
		tr := newBubbleTransport(base, Options{MinDelay: time.Second})
		var mu sync.Mutex
		var waits []time.Duration
		fetches := map[Outcome][]time.Duration{}
		remove := tr.AddHooks(Hooks{
			Waited: func(d time.Duration) { mu.Lock(); waits = append(waits, d); mu.Unlock() },
			Fetched: func(o Outcome, d time.Duration) {
				mu.Lock()
				fetches[o] = append(fetches[o], d)
				mu.Unlock()
			},
		})
		for _, c := range []struct {
			url  string
			fail bool
		}{
			{"http://ok.example/a", false},
			{"http://ok.example/gone", false},
			{"http://ok.example/busy", false},
			{"http://down.example/x", true},
			{"http://reset.example/x", true},
		} {
			if _, err := bubbleGet(t, tr, c.url); (err != nil) != c.fail {
				t.Fatalf("%s: err = %v, want failure %v", c.url, err, c.fail)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://ok.example/paused", nil)
		if _, err := tr.RoundTrip(req); !errors.As(err, new(*SlotError)) {
			t.Fatalf("a request due in the pause, 10s left: err = %v, want a *SlotError", err)
		}

		st := tr.Stats()
		if want := map[string]int64{"1xx": 0, "2xx": 1, "3xx": 0, "4xx": 2, "5xx": 0, "network": 1}; !maps.Equal(st.Responses, want) {
			t.Errorf("Responses %v, want %v", st.Responses, want)
		}
		if want := map[int]int64{429: 1, 503: 0}; !maps.Equal(st.Pauses, want) {
			t.Errorf("Pauses %v, want %v", st.Pauses, want)
		}
		got := [...]int64{st.Sent, st.SlotErrors, int64(st.OriginsPaused), int64(st.OriginsUnreachable), int64(st.FleetMembers)}
		if want := [...]int64{4, 1, 1, 1, 0}; got != want {
			t.Errorf("Sent, SlotErrors, OriginsPaused, OriginsUnreachable, FleetMembers = %v, want %v", got, want)
		}
		mu.Lock()
		// Paced: ok's three pages and the one refused its slot, reset's
		// page; ok's second and third waited a second each.
		if want := []time.Duration{0, time.Second, time.Second, 0, 0}; !slices.Equal(waits, want) {
			t.Errorf("hooks told of waits %v, want %v", waits, want)
		}
		if want := map[Outcome][]time.Duration{Parsed: {300 * time.Millisecond, 300 * time.Millisecond}, Unreachable: {0}}; !maps.EqualFunc(fetches, want, slices.Equal) {
			t.Errorf("hooks told of fetches %v, want %v", fetches, want)
		}
		mu.Unlock()

		remove()
		time.Sleep(3 * time.Minute) // past the pause
		if _, err := bubbleGet(t, tr, "http://ok.example/after"); err != nil {
			t.Fatal(err)
		}
		if n := tr.Stats().OriginsPaused; n != 0 {
			t.Errorf("OriginsPaused %d after the pause ended, want 0", n)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(waits) != 5 {
			t.Errorf("hooks told of %d waits after they were removed", len(waits)-5)
		}
	})
}

// TestStatsFleetMembers checks that Stats.FleetMembers is the member count
// the store gave with the last slot, and that a store's skipped calls
// count as fallbacks, not errors.
// TestStatsResponseClasses checks the class each status counts under,
// at the edges of the classes and past them, and an error as network.
func TestStatsResponseClasses(t *testing.T) {
	tests := []struct {
		status int
		err    error
		want   string
	}{
		{101, nil, "1xx"}, {199, nil, "1xx"}, {200, nil, "2xx"}, {399, nil, "3xx"}, {400, nil, "4xx"},
		{599, nil, "5xx"}, {600, nil, "5xx"}, {999, nil, "5xx"}, {99, nil, "1xx"},
		{0, errors.New("reset"), "network"},
	}
	for _, tt := range tests {
		var c counters
		var resp *http.Response
		if tt.err == nil {
			resp = &http.Response{StatusCode: tt.status}
		}
		c.responded(resp, tt.err)
		got := c.snapshot(0, 0, 0).Responses
		if got[tt.want] != 1 || len(got) != len(responseClasses) {
			t.Errorf("status %d, error %v: counted %v, want one under %s", tt.status, tt.err, got, tt.want)
		}
	}
}

func TestStatsFleetMembers(t *testing.T) {
	c := newClock()
	store := &fleetStub{fleetStore: newFleetStore(), clock: c, members: 3}
	tr := NewTransport(&sendLog{clock: c}, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: store, Now: c.Now, Sleep: c.Sleep})
	if _, err := getWithin(t, tr, "http://fleet.example/up"); err != nil {
		t.Fatal(err)
	}
	if st := tr.Stats(); st.FleetMembers != 3 || st.StoreErrors != 0 || st.StoreFallbacks != 0 {
		t.Errorf("FleetMembers %d, StoreErrors %d, StoreFallbacks %d with a store of 3 members up, want 3, 0, 0", st.FleetMembers, st.StoreErrors, st.StoreFallbacks)
	}
}

// TestStatsCountEachRequestOnce: a request the head of its line decides
// again, its robots.txt renewed while it waited, is one decision, as it
// last stood; and Sent less RobotsRequests, the pages sent, only grows,
// a request for /robots.txt counted as it is sent.
func TestStatsCountEachRequestOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetches atomic.Int32
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			body := "User-agent: *\nCrawl-delay: 1\n"
			if r.URL.Path == "/robots.txt" && fetches.Add(1) > 1 {
				body += "Disallow: /\n" // the renewed copy refuses
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		tr := NewTransport(base, Options{UserAgent: "CountBot", Freshness: 2500 * time.Millisecond, MinFreshness: 2500 * time.Millisecond})
		const n = 6
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { sendFrom(tr, fmt.Sprintf("http://site.example/p%d", i)) })
		}
		done, seen := make(chan struct{}), make(chan []int64)
		go func() {
			var pages []int64
			for {
				select {
				case <-done:
					seen <- pages
					return
				case <-time.After(100 * time.Millisecond):
					st := tr.Stats()
					pages = append(pages, st.Sent-st.RobotsRequests)
				}
			}
		}()
		sendFrom(tr, "http://site.example/robots.txt")
		wg.Wait()
		close(done)
		pagesSeen := <-seen
		st := tr.Stats()
		if st.Allowed+st.Refused != n {
			t.Errorf("Allowed %d + Refused %d for %d requests; want each counted once", st.Allowed, st.Refused, n)
		}
		if st.Refused == 0 {
			t.Error("no request was decided again on the renewed copy: the test proves nothing")
		}
		if st.RobotsRequests != 1 || st.Sent != st.Allowed+1 {
			t.Errorf("Sent %d, RobotsRequests %d, Allowed %d; want the pages allowed and one /robots.txt", st.Sent, st.RobotsRequests, st.Allowed)
		}
		if !slices.IsSorted(pagesSeen) {
			t.Errorf("pages sent, read as the crawl went: %v; want them only growing", pagesSeen)
		}
	})
}
