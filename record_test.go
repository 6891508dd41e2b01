package robots

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestFreshnessHeaders checks that Cache-Control and Age set how long a
// robots.txt is reused, within [MinFreshness, Freshness]: a max-age=0,
// no-cache or no-store file is not fetched again for every request.
func TestFreshnessHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration // how long the copy is reused
	}{
		{"no header", nil, DefaultFreshness},
		{"max-age shorter", http.Header{"Cache-Control": {"max-age=3600"}}, time.Hour},
		{"max-age longer", http.Header{"Cache-Control": {"max-age=999999999"}}, DefaultFreshness},
		{"max-age less Age", http.Header{"Cache-Control": {"max-age=3600"}, "Age": {"3500"}}, 100 * time.Second},
		{"max-age with a sign ignored", http.Header{"Cache-Control": {"max-age=+3600"}}, DefaultFreshness},
		{"Age with a sign ignored", http.Header{"Cache-Control": {"max-age=3600"}, "Age": {"+3500"}}, time.Hour},
		{"Age past max-age", http.Header{"Cache-Control": {"max-age=3600"}, "Age": {"7200"}}, DefaultMinFreshness},
		{"max-age=0", http.Header{"Cache-Control": {"max-age=0"}}, DefaultMinFreshness},
		{"no-cache", http.Header{"Cache-Control": {"no-cache"}}, DefaultMinFreshness},
		{"no-store", http.Header{"Cache-Control": {"public, no-store"}}, DefaultMinFreshness},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				io.WriteString(w, privateRobots)
			})
			c := newClock()
			tr := newTestTransport(t, c, Options{})
			for range 20 {
				if _, err := get(t, tr, s.URL+"/page"); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.robotsHits.Load(); got != 1 {
				t.Errorf("%d robots.txt fetches for 20 requests, want 1", got)
			}
			c.Advance(tc.want - time.Second)
			tr.Check(context.Background(), s.URL+"/page")
			if got := s.robotsHits.Load(); got != 1 {
				t.Errorf("refetched %v before it was stale", tc.want-time.Second)
			}
			c.Advance(time.Second)
			tr.Check(context.Background(), s.URL+"/page")
			if got := s.robotsHits.Load(); got != 2 {
				t.Errorf("not refetched once stale after %v", tc.want)
			}
		})
	}
}

// TestLifetimeBounds checks the pure freshness arithmetic at its edges.
func TestLifetimeBounds(t *testing.T) {
	f := lifetimes{fresh: time.Hour, minFresh: time.Minute}
	max := time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		name string
		res  fetchResult
		want time.Duration
	}{
		{"none", fetchResult{maxAge: -1}, time.Hour},
		{"huge max-age", fetchResult{maxAge: max}, time.Hour},
		{"huge age", fetchResult{maxAge: 30 * time.Minute, age: max}, time.Minute},
		{"no-cache wins over max-age", fetchResult{maxAge: 30 * time.Minute, noCache: true}, time.Minute},
	} {
		if got := f.lifetime(tc.res); got != tc.want {
			t.Errorf("%s: lifetime %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestXFromCacheIgnored checks that a server's own X-From-Cache header is
// not taken for a revalidation: only a 304 to the transport's conditional
// GET counts.
func TestXFromCacheIgnored(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-From-Cache", "1")
		io.WriteString(w, privateRobots)
	})
	c := newClock()
	tr := newTestTransport(t, c, Options{})
	tr.Check(context.Background(), s.URL+"/x")
	c.Advance(DefaultFreshness)
	tr.Check(context.Background(), s.URL+"/x")
	if st := tr.Stats(); st.Revalidated != 0 || st.Fetches[Parsed] != 2 {
		t.Errorf("Revalidated %d, parsed %d; want 0, 2", st.Revalidated, st.Fetches[Parsed])
	}
}

// TestMerge checks how two transports' records of one origin combine:
// never an older outcome over a newer one, never losing the last good
// copy or the outage clock.
func TestMerge(t *testing.T) {
	t0 := newClock().Now()
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	parsed := func(h int) record {
		return record{Outcome: Parsed, Body: []byte(fmt.Sprint("# ", h)), FetchedAt: at(h), Expires: at(h + 24)}
	}
	down := func(since, h, failures int, good *record) record {
		return record{Outcome: Unreachable, FetchedAt: at(h), Since: at(since), RetryAt: at(h + 1), Failures: failures, Good: good}
	}
	p1, p5 := parsed(1), parsed(5)
	for _, tc := range []struct {
		name     string
		a, b     record
		outcome  Outcome
		since    time.Time
		failures int
		good     *record
	}{
		{"newer parsed wins", parsed(2), parsed(3), Parsed, time.Time{}, 0, nil},
		{"newer parsed over an outage", down(1, 2, 2, &p1), parsed(3), Parsed, time.Time{}, 0, nil},
		{"outage keeps the older good copy", down(2, 3, 1, nil), p1, Unreachable, at(2), 1, &p1},
		{"outages keep the earliest start", down(1, 4, 3, &p1), down(2, 5, 1, nil), Unreachable, at(1), 3, &p1},
		{"outages keep the newest good copy", down(2, 6, 1, &p1), down(6, 7, 1, &p5), Unreachable, at(2), 1, &p5},
		{"success after the outage began restarts its clock", down(3, 6, 2, &p1), p5, Unreachable, at(6), 1, &p5},
	} {
		for _, order := range []string{"a,b", "b,a"} {
			t.Run(tc.name+" "+order, func(t *testing.T) {
				a, b := tc.a, tc.b
				if order == "b,a" {
					a, b = b, a
				}
				got := merge(a, b)
				if got.Outcome != tc.outcome || !got.Since.Equal(tc.since) || got.Failures != tc.failures {
					t.Errorf("outcome %v since %v failures %d; want %v %v %d", got.Outcome, got.Since, got.Failures, tc.outcome, tc.since, tc.failures)
				}
				if (got.Good == nil) != (tc.good == nil) || got.Good != nil && !got.Good.FetchedAt.Equal(tc.good.FetchedAt) {
					t.Errorf("good copy %+v, want %+v", got.Good, tc.good)
				}
			})
		}
	}
}

// TestRecordCut checks that a record read from a store is cut to the
// reader's MaxSize as a fetch is, its last good copy too, at a line end;
// and that a body cut is a copy, not a window on the bytes read, which a
// record far past MaxSize would otherwise keep whole.
func TestRecordCut(t *testing.T) {
	const limit = 16
	long := []byte("Disallow: /a\nDisallow: /b\nDisallow: /c\n") // 39 bytes, lines of 13
	short := []byte("Allow: /\n")
	for _, tc := range []struct {
		name               string
		body, good         []byte
		wantBody, wantGood string
		cutBody, cutGood   bool
	}{
		{"within", short, short, string(short), string(short), false, false},
		{"at the limit", long[:13], nil, string(long[:13]), "", false, false},
		{"its body past it", long, nil, "Disallow: /a\n", "", true, false},
		{"its last good copy past it", nil, long, "", "Disallow: /a\n", false, true},
		{"both past it", long, long, "Disallow: /a\n", "Disallow: /a\n", true, true},
		{"one past it, the other within", short, long, string(short), "Disallow: /a\n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := slices.Concat(tc.body, tc.good) // what the store read
			r := record{Outcome: Parsed, Body: raw[:len(tc.body):len(tc.body)], Size: int64(len(tc.body))}
			if tc.good != nil {
				r.Good = &record{Outcome: Parsed, Body: raw[len(tc.body):], Size: int64(len(tc.good))}
			}
			r.cut(limit)
			if tc.cutBody || tc.cutGood {
				// Bodies that are copies do not see the bytes read change.
				for i := range raw {
					raw[i] = 'x'
				}
			}
			if string(r.Body) != tc.wantBody || r.Truncated != tc.cutBody || r.Size != int64(len(r.Body)) {
				t.Errorf("body %q (truncated %v, size %d), want %q (truncated %v)", r.Body, r.Truncated, r.Size, tc.wantBody, tc.cutBody)
			}
			if tc.good != nil && (string(r.Good.Body) != tc.wantGood || r.Good.Truncated != tc.cutGood) {
				t.Errorf("last good copy %q (truncated %v), want %q (truncated %v)", r.Good.Body, r.Good.Truncated, tc.wantGood, tc.cutGood)
			}
		})
	}
}
