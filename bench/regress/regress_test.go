package regress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

// Only the exported API is used here, and nothing of the bench package:
// this file must compile unchanged against old and new trees.

// corpusEnv names the environment variable that overrides defaultCorpus.
const corpusEnv = "ROBOTS_CORPUS"

// defaultCorpus is the module's corpus as seen from this directory.
const defaultCorpus = "../../testdata/robots-corpus"

// decideAgent is the product token decisions are made for: a named token,
// so that every decision selects groups (Googlebot's where the file has
// one, else *).
const decideAgent = "Googlebot"

// decideSample is how many (file, url) pairs BenchmarkDecision cycles
// through: pair k is file k mod F and url k mod U, the pairing of the
// corpus README, and with F = 147 every file is decided 10 times. An
// iteration count that is a multiple of it decides each pair equally
// often, which cmd/compare relies on.
const decideSample = 1470

// corpusData is the corpus: files in byte order of name, and the urls of
// urls.txt in file order.
type corpusData struct {
	files [][]byte
	size  int64
	urls  []string
}

var loadCorpus = sync.OnceValues(func() (*corpusData, error) {
	dir := os.Getenv(corpusEnv)
	if dir == "" {
		dir = defaultCorpus
	}
	urls, err := os.ReadFile(filepath.Join(dir, "urls.txt"))
	if err != nil {
		return nil, fmt.Errorf("corpus: %w (set %s to its directory)", err, corpusEnv)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	c := &corpusData{}
	for _, name := range names {
		if filepath.Base(name) == "urls.txt" {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		c.files = append(c.files, data)
		c.size += int64(len(data))
	}
	sc := bufio.NewScanner(bytes.NewReader(urls))
	for sc.Scan() {
		if sc.Text() != "" {
			c.urls = append(c.urls, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(c.files) == 0 || len(c.urls) == 0 {
		return nil, fmt.Errorf("corpus at %s: %d files, %d urls", dir, len(c.files), len(c.urls))
	}
	return c, nil
})

// needCorpus returns the corpus, failing b when it cannot be read: a
// comparison without it would measure nothing.
func needCorpus(b *testing.B) *corpusData {
	b.Helper()
	c, err := loadCorpus()
	if errors.Is(err, fs.ErrNotExist) && os.Getenv(corpusEnv) == "" {
		b.Skipf("skipping: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return c
}

var (
	sinkRobots *policy.Robots
	sinkCount  int
)

// BenchmarkDecision makes one decision per operation on files parsed
// beforehand, (*policy.Robots).Allowed for decideAgent: operation k
// decides pair k mod decideSample. Every pair is decided three times
// before the timed loop, each file 30 times, so that the indexes a file
// builds after its first lookups and decisions (4 and 16 of them) are
// built outside it.
func BenchmarkDecision(b *testing.B) {
	c := needCorpus(b)
	parsed := make([]*policy.Robots, len(c.files))
	for i, f := range c.files {
		parsed[i] = policy.Parse(f)
	}
	type pair struct {
		r    *policy.Robots
		path string
	}
	sample := make([]pair, decideSample)
	for k := range sample {
		sample[k] = pair{parsed[k%len(parsed)], c.urls[k%len(c.urls)]}
	}
	for range 3 {
		for _, p := range sample {
			p.r.Allowed(p.path, decideAgent)
		}
	}
	k, allowed := 0, 0
	for b.Loop() {
		if p := sample[k]; p.r.Allowed(p.path, decideAgent) {
			allowed++
		}
		if k++; k == len(sample) {
			k = 0
		}
	}
	sinkCount = allowed
}

// BenchmarkParse parses every corpus file, whole, per operation.
func BenchmarkParse(b *testing.B) {
	c := needCorpus(b)
	b.SetBytes(c.size)
	for b.Loop() {
		for _, f := range c.files {
			sinkRobots = policy.Parse(f)
		}
	}
}

// heldAgent is the crawler's User-Agent; the requests carry it, so that
// the transport sends them as they are rather than a clone with its own.
const heldAgent = "HeldBot/1.0 (+https://example.com/bot)"

// heldRobots is the robots.txt of the held origin: a group for HeldBot
// that allows heldPath, no Crawl-delay.
const heldRobots = `User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*?sessionid=

User-agent: HeldBot
Disallow: /admin/
Disallow: /search
Allow: /search/about
Disallow: /*.pdf$

Sitemap: https://www.example.com/sitemap.xml
`

// heldURL is the URL every request asks for.
const heldURL = "https://www.example.com/catalog/page-17?color=blue"

// memBase answers /robots.txt with heldRobots and every other request
// with 200 and an empty body, in memory, counting both.
type memBase struct {
	robots, pages atomic.Int64
}

// pageHeader is shared by every page response; nothing modifies it.
var pageHeader = http.Header{"Content-Type": {"text/html"}}

func (m *memBase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/robots.txt" {
		m.robots.Add(1)
		return &http.Response{
			StatusCode:    http.StatusOK,
			Header:        http.Header{"Content-Type": {"text/plain"}},
			Body:          io.NopCloser(strings.NewReader(heldRobots)),
			ContentLength: int64(len(heldRobots)),
			Request:       req,
		}, nil
	}
	m.pages.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Header: pageHeader, Body: http.NoBody, Request: req}, nil
}

// BenchmarkHeld sends one request per operation for heldURL: "bare" on
// memBase alone, "transport" through a robots.Transport over it whose
// origin's robots.txt was fetched (by Check) before the timed loop and
// stays fresh through it, with MinDelay -1 so that nothing paces the
// requests. What the transport adds to a request on a held origin is
// transport less bare.
func BenchmarkHeld(b *testing.B) {
	req, err := http.NewRequest(http.MethodGet, heldURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("User-Agent", heldAgent)
	b.Run("bare", func(b *testing.B) {
		base := &memBase{}
		for b.Loop() {
			send(b, base, req)
		}
	})
	b.Run("transport", func(b *testing.B) {
		base := &memBase{}
		var sleeps atomic.Int64
		tr := robots.NewTransport(base, robots.Options{
			UserAgent: heldAgent,
			MinDelay:  -1,
			Sleep: func(context.Context, time.Duration) error {
				sleeps.Add(1)
				return nil
			},
		})
		if err := tr.Check(context.Background(), heldURL); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			send(b, tr, req)
		}
		b.StopTimer()
		if n := base.robots.Load(); n != 1 {
			b.Fatalf("robots.txt fetched %d times, want once: the origin was not held", n)
		}
		if n := sleeps.Load(); n != 0 {
			b.Fatalf("%d paced requests, want none", n)
		}
	})
}

// send round-trips req on rt and closes the response, failing unless it
// is a 200.
func send(b *testing.B, rt http.RoundTripper, req *http.Request) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkNewOrigin sends one request per operation, each to an origin
// not met before, as a broad crawl does: "bare" on memBase alone,
// "transport" through a robots.Transport with the default options over
// it, which fetches, parses and stores each origin's robots.txt, decides
// the request and takes its first slot. What a new origin costs is
// transport against bare: the transport's round trip is two of bare's
// (robots.txt, then the page) and what it adds.
func BenchmarkNewOrigin(b *testing.B) {
	newReq := func(i int) *http.Request {
		req, err := http.NewRequest(http.MethodGet, "https://site"+strconv.Itoa(i)+".example/catalog/page-17", nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("User-Agent", heldAgent)
		return req
	}
	b.Run("bare", func(b *testing.B) {
		base := &memBase{}
		i := 0
		for b.Loop() {
			send(b, base, newReq(i))
			i++
		}
	})
	b.Run("transport", func(b *testing.B) {
		base := &memBase{}
		tr := robots.NewTransport(base, robots.Options{UserAgent: heldAgent})
		i := 0
		for b.Loop() {
			send(b, tr, newReq(i))
			i++
		}
		b.StopTimer()
		if n := base.robots.Load(); n != int64(i) {
			b.Fatalf("robots.txt fetched %d times for %d origins", n, i)
		}
	})
	// The same pair on net/http's Transport, to a server on the loopback
	// that every host name dials: each new origin a new connection, which
	// its robots.txt and its page share.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, heldRobots)
		}
	}))
	defer srv.Close()
	newNetHTTP := func() *http.Transport {
		return &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return new(net.Dialer).DialContext(ctx, network, srv.Listener.Addr().String())
			},
			MaxIdleConns: 16,
		}
	}
	newPlainReq := func(i int) *http.Request {
		req := newReq(i)
		req.URL.Scheme = "http"
		return req
	}
	b.Run("nethttp-bare", func(b *testing.B) {
		base := newNetHTTP()
		defer base.CloseIdleConnections()
		i := 0
		for b.Loop() {
			send(b, base, newPlainReq(i))
			i++
		}
	})
	b.Run("nethttp-transport", func(b *testing.B) {
		base := newNetHTTP()
		defer base.CloseIdleConnections()
		tr := robots.NewTransport(base, robots.Options{UserAgent: heldAgent})
		i := 0
		for b.Loop() {
			send(b, tr, newPlainReq(i))
			i++
		}
	})
}
