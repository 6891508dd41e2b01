package robots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/crawlkit/robots/policy"
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

// TestRecordEncoding checks that a record survives its stored form with
// one copy of each body, and that any cut of it reads as missing.
func TestRecordEncoding(t *testing.T) {
	now := newClock().Now()
	good := record{Outcome: Parsed, Status: 200, Body: []byte(privateRobots), Size: int64(len(privateRobots)), FetchedAt: now, Expires: now.Add(time.Hour), ETag: `"v1"`}
	rec := record{Outcome: Unreachable, Status: 503, FetchedAt: now, Since: now, RetryAt: now.Add(time.Minute), Failures: 2, Err: "robots: down", Good: &good}
	data := rec.encode()
	if n := bytes.Count(data, []byte(privateRobots)); n != 1 {
		t.Errorf("body stored %d times, want once", n)
	}
	back, err := decodeRecord(data)
	if err != nil || back.Good == nil || string(back.Good.Body) != privateRobots || back.Good.ETag != `"v1"` || back.Failures != 2 || !back.Since.Equal(now) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	for i := range len(data) {
		if _, err := decodeRecord(data[:i]); err == nil {
			t.Fatalf("record cut at %d of %d bytes read as valid", i, len(data))
		}
	}
	if _, err := decodeRecord([]byte("robots-record v3\n{}")); !errors.Is(err, errNewerRecord) {
		t.Errorf("newer version: %v, want errNewerRecord", err)
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

// TestMaxSizeClamped checks that a MaxSize of math.MaxInt reads plain
// and gzip files in full instead of overflowing into an empty or
// unreachable robots.txt.
func TestMaxSizeClamped(t *testing.T) {
	for _, enc := range []string{"", "gzip"} {
		t.Run("encoding "+enc, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if enc == "gzip" {
					w.Header().Set("Content-Encoding", "gzip")
					w.Write(gzipped(t, privateRobots))
					return
				}
				io.WriteString(w, privateRobots)
			})
			tr := newTestTransport(t, newClock(), Options{MaxSize: math.MaxInt})
			if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("/private: %v, want refused", err)
			}
			if info, _ := tr.Robots(context.Background(), s.URL); info.Outcome != Parsed || string(info.Body) != privateRobots {
				t.Errorf("Robots = %v %q", info.Outcome, info.Body)
			}
		})
	}
	if got := newConfig(Options{MaxSize: math.MaxInt}).maxSize; got != MaxMaxSize {
		t.Errorf("maxSize %d, want MaxMaxSize", got)
	}
	if got := newConfig(Options{MaxSize: 1}).maxSize; got != policy.MaxSize {
		t.Errorf("maxSize %d, want policy.MaxSize", got)
	}
}
