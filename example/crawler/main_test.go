package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/fakeclock"
)

// testClock is the tests' injected clock.
type testClock = fakeclock.Clock

func newClock() *testClock { return fakeclock.New() }

// crawlTest runs the command with args on an injected clock and returns
// its output, the clock and its error.
func crawlTest(t *testing.T, args ...string) (string, *testClock, error) {
	t.Helper()
	clk := newClock()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only a hang reaches it
	defer cancel()
	err := run(ctx, args, env{stdout: &stdout, stderr: &stderr, now: clk.Now, sleep: clk.Sleep})
	return stdout.String() + stderr.String(), clk, err
}

// urlLine matches one per-URL line: what happened, the status, the
// request-URI and a note.
var urlLine = regexp.MustCompile(`^(fetched|refused|error) +(\d{3})? +(\S+)(?:  +(.*))?$`)

// visits returns the per-URL lines of out by request-URI, failing the
// test if a URL was visited twice.
func visits(t *testing.T, out string) map[string][]string {
	t.Helper()
	m := make(map[string][]string)
	for line := range strings.Lines(out) {
		f := urlLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if f == nil {
			continue
		}
		if _, dup := m[f[3]]; dup {
			t.Errorf("%s visited twice", f[3])
		}
		m[f[3]] = f[1:]
	}
	return m
}

// ruleLine returns the line of rule in the group of the demo site's
// robots.txt that starts with "User-agent: agent"; with rule "", the line
// of that User-agent, and with rule "end", the group's last line.
func ruleLine(t *testing.T, agent, rule string) int {
	t.Helper()
	data, err := siteFiles.ReadFile("site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		switch line := sc.Text(); {
		case line == "User-agent: "+agent:
			if rule == "" {
				return n
			}
			in = true
		case in && line == "" && rule == "end":
			return n - 1
		case line == "":
			in = false
		case in && line == rule:
			return n
		}
	}
	t.Fatalf("robots.txt has no %q in the group for %s", rule, agent)
	return 0
}

// groupLines describes a group of the demo robots.txt as the header does.
func groupLines(t *testing.T, agent string) string {
	return fmt.Sprintf("%-12s User-agent: %s", fmt.Sprintf("lines %d-%d", ruleLine(t, agent, ""), ruleLine(t, agent, "end")), agent)
}

func TestDemo(t *testing.T) {
	out, clk, err := crawlTest(t)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	got := visits(t, out)
	rule := func(rule string) string {
		return fmt.Sprintf("%s (line %d)", rule, ruleLine(t, "DemoBot", rule))
	}
	refusedBy := func(r string) []string { return []string{"refused", "", "", rule(r)} }
	for _, tc := range []struct {
		name, uri string
		want      []string // what, status, note
	}{
		{"sitemap from robots.txt is read", "/sitemap.xml", []string{"fetched", "200", "", "sitemap, 6 URLs"}},
		{"start page is fetched", "/", []string{"fetched", "200", "", ""}},
		{"Allow exception inside a disallowed area is fetched and named", "/private/press-kit/", []string{"fetched", "200", "", rule("Allow: /private/press-kit/")}},
		{"relative link is followed", "/team", []string{"fetched", "200", "", ""}},
		{"missing page is fetched with its status", "/contact", []string{"fetched", "404", "", ""}},
		{"own group's Disallow refuses", "/private/report", refusedBy("Disallow: /private/")},
		{"sitemap URL is still decided by robots.txt", "/drafts/spring-sale", refusedBy("Disallow: /drafts/")},
		{"wildcard rule refuses a query", "/products/?sort=price", refusedBy("Disallow: /*?sort=")},
		{"wildcard rule matches within a longer query", "/products/?sort=name&order=asc", refusedBy("Disallow: /*?sort=")},
		{"star group does not apply to a crawler with its own group", "/search?q=robots", []string{"fetched", "200", "", ""}},
		{"other crawler's group does not apply", "/blog/hello-robots", []string{"fetched", "200", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := append([]string(nil), tc.want...)
			want[2] = tc.uri
			if g := got[tc.uri]; fmt.Sprint(g) != fmt.Sprint(want) {
				t.Errorf("%s: got %q, want %q", tc.uri, g, want)
			}
		})
	}

	t.Run("header names the group DemoBot follows and those it ignores", func(t *testing.T) {
		for _, want := range []string{
			"DemoBot follows the group that names it:\n    " + groupLines(t, "DemoBot") + "\n",
			"so these do not apply:\n    " + groupLines(t, "*") + "\n    " + groupLines(t, "OtherBot") + "\n",
			"Pace: at most one request every 250ms, the Crawl-delay of its group.",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	var fetched, refused int
	for _, v := range got {
		switch v[0] {
		case "fetched":
			fetched++
		case "refused":
			refused++
		}
	}
	t.Run("summary counts the lines above it", func(t *testing.T) {
		for _, want := range []string{
			fmt.Sprintf("  fetched  %3d  200: %d, 404: 1\n", fetched, fetched-1),
			fmt.Sprintf("  refused  %3d  2 by Disallow: /private/ (line %d)\n", refused, ruleLine(t, "DemoBot", "Disallow: /private/")),
			"  errors     0\n",
			"  robots.txt fetches: 1 (1 parsed)\n",
			fmt.Sprintf("The demo site received %d requests, 1 of them for robots.txt", fetched+1),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if fetched != 12 || refused != 6 {
			t.Errorf("fetched %d and refused %d URLs, want 12 and 6", fetched, refused)
		}
	})

	t.Run("Crawl-delay spaces every request after the first", func(t *testing.T) {
		waits := clk.Waits()
		if len(waits) != fetched-1 {
			t.Errorf("%d waits for %d requests, want %d", len(waits), fetched, fetched-1)
		}
		for _, w := range waits {
			if w != 250*time.Millisecond {
				t.Errorf("waited %v, want the Crawl-delay 250ms", w)
			}
		}
		want := fmt.Sprintf("  waited for politeness: %v\n", time.Duration(fetched-1)*250*time.Millisecond)
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})
}

// newServer starts a test site: robots.txt answered by robots, every
// other path by pages, and the request-URIs of pages recorded.
func newServer(t *testing.T, robots, pages http.HandlerFunc) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots(w, r)
			return
		}
		mu.Lock()
		hits = append(hits, r.URL.RequestURI())
		mu.Unlock()
		pages(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), hits...)
	}
}

// endless serves pages that each link to the next: /1 to /2 and so on.
func endless(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, `<a href="/%d">next</a>`, n+1)
}

func TestURL(t *testing.T) {
	t.Run("unreachable robots.txt refuses every URL and the crawl fails", func(t *testing.T) {
		srv, hits := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}, endless)
		out, _, err := crawlTest(t, "-url", srv.URL+"/1")
		if err == nil || !strings.Contains(err.Error(), "nothing fetched: the robots.txt of "+srv.URL+" is unreachable") {
			t.Errorf("err = %v, want the robots.txt unreachable", err)
		}
		for _, want := range []string{
			"robots.txt: unreachable: ",
			"must assume it\n  disallows everything (RFC 9309 section 2.3.1.4)",
			"  refused    1  1 by robots.txt unreachable, next try at ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if got := visits(t, out)["/1"]; len(got) == 0 || got[0] != "refused" {
			t.Errorf("/1: %q, want refused", got)
		}
		if h := hits(); len(h) > 0 {
			t.Errorf("the site was sent %q", h)
		}
	})

	t.Run("missing robots.txt allows every URL, up to -max", func(t *testing.T) {
		srv, hits := newServer(t, http.NotFound, endless)
		out, clk, err := crawlTest(t, "-url", srv.URL+"/1", "-max", "3")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		if want := "robots.txt: 404 Not Found, so there are no rules and every URL is allowed"; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
		if h := hits(); fmt.Sprint(h) != "[/1 /2 /3]" {
			t.Errorf("site was sent %q, want /1 /2 /3", h)
		}
		if w := clk.Waits(); fmt.Sprint(w) != "[1s 1s]" {
			t.Errorf("waits %v, want the default minimum delay 1s between requests", w)
		}
	})

	t.Run("interrupt during a politeness wait ends the crawl with its summary", func(t *testing.T) {
		srv, hits := newServer(t, http.NotFound, endless)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clk := newClock()
		var out bytes.Buffer
		err := run(ctx, []string{"-url", srv.URL + "/1"}, env{stdout: &out, stderr: &out, now: clk.Now,
			sleep: func(ctx context.Context, d time.Duration) error {
				cancel() // as Ctrl-C would, while the second request waits
				return ctx.Err()
			}})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "crawl interrupted") {
			t.Errorf("err = %v, want the crawl interrupted", err)
		}
		if want := "Summary after 0s\n  fetched    1  200: 1\n  refused    0\n  errors     0\n"; !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
		if h := hits(); fmt.Sprint(h) != "[/1]" {
			t.Errorf("site was sent %q, want only /1", h)
		}
	})

	t.Run("sitemap index and gzip sitemap seed the crawl", func(t *testing.T) {
		var srv *httptest.Server
		srv, hits := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "User-agent: *\nDisallow: /2\nSitemap: %s/index.xml\n", srv.URL)
		}, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/index.xml":
				fmt.Fprintf(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>%s/pages.xml.gz</loc></sitemap></sitemapindex>`, srv.URL)
			case "/pages.xml.gz":
				zw := gzip.NewWriter(w)
				fmt.Fprintf(zw, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/2</loc></url><url><loc>%[1]s/7</loc></url><url><loc>http://elsewhere.test/1</loc></url></urlset>`, srv.URL)
				zw.Close()
			default:
				w.Write([]byte("no links"))
			}
		})
		out, _, err := crawlTest(t, "-url", srv.URL+"/")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		for _, want := range []string{
			"fetched  200  /index.xml                      sitemap index, 1 sitemaps\n",
			"fetched  200  /pages.xml.gz                   sitemap, 3 URLs\n",
			"refused       /2                              Disallow: /2 (line 2)\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if h := hits(); fmt.Sprint(h) != "[/index.xml /pages.xml.gz / /7]" {
			t.Errorf("site was sent %q, want the sitemaps, / and /7", h)
		}
	})
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"URL without a scheme", []string{"-url", "example.com"}, `-url "example.com": want an absolute http or https URL`},
		{"URL of another scheme", []string{"-url", "ftp://example.com/"}, `-url "ftp://example.com/": want`},
		{"URL with an invalid port", []string{"-url", "http://example.com:99999/"}, `-url "http://example.com:99999/": want`},
		{"max below one", []string{"-max", "0"}, "-max must be at least 1, not 0"},
		{"agent without a product token", []string{"-agent", "/1.0"}, `-agent "/1.0" does not start with a product token`},
		{"positional argument", []string{"https://example.com/"}, `unexpected argument "https://example.com/"`},
		{"unknown flag", []string{"-depth", "2"}, "flag provided but not defined: -depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := crawlTest(t, tc.args...)
			if !errors.As(err, new(usageError)) {
				t.Errorf("err = %v, want a usage error", err)
			}
			if !strings.Contains(out, tc.want) || !strings.Contains(out, "Usage: crawler") {
				t.Errorf("output lacks %q and the usage:\n%s", tc.want, out)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		want       []string
	}{
		{"double-quoted href", `<a href="/a">x</a>`, []string{"/a"}},
		{"single-quoted href", `<a class=x href='/b'>x</a>`, []string{"/b"}},
		{"unquoted href", `<a href=/c>x</a>`, []string{"/c"}},
		{"tag and attribute in any case", `<A HREF="/d">x</A>`, []string{"/d"}},
		{"character references decoded", `<a href="/e?x=1&amp;y=2">x</a>`, []string{"/e?x=1&y=2"}},
		{"area tags are links", `<area shape=rect href="/f">`, []string{"/f"}},
		{"stylesheets are not links", `<link rel=stylesheet href="/g.css">`, nil},
		{"attribute spread over lines", "<a\nclass=\"x\"\nhref = \"/h\">x</a>", []string{"/h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := links([]byte(tc.page)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("links(%q) = %q, want %q", tc.page, got, tc.want)
			}
		})
	}
}

// TestSigning crawls with -sign-key: every request the site receives,
// robots.txt and the redirect hop included, carries a Web Bot Auth
// signature that verifies with the key, over its own path, with a nonce
// of its own.
func TestSigning(t *testing.T) {
	const agentURL = "https://crawler.example/.well-known/http-message-signatures-directory"
	seed := bytes.Repeat([]byte{9}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}

	type seen struct{ method, host, path, input, signature, agent string }
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, seen{r.Method, r.Host, r.URL.EscapedPath(), r.Header.Get("Signature-Input"), r.Header.Get("Signature"), r.Header.Get("Signature-Agent")})
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			http.Redirect(w, r, "/home", http.StatusFound)
		default:
			fmt.Fprint(w, "<html>no links</html>")
		}
	}))
	t.Cleanup(srv.Close)

	out, clk, err := crawlTest(t, "-url", srv.URL+"/", "-sign-key", keyFile, "-sign-agent", agentURL)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Signing every request with Web Bot Auth: key ") {
		t.Errorf("output does not say it signs:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("site saw %d requests, want robots.txt, / and the hop to /home: %+v", len(got), got)
	}
	input := regexp.MustCompile(`^sig1=(\("@method" "@authority" "@path" "signature-agent"\);created=(\d+);expires=\d+;keyid="[^"]+";nonce="([^"]+)";tag="web-bot-auth")$`)
	nonces := map[string]bool{}
	for _, r := range got {
		m := input.FindStringSubmatch(r.input)
		if m == nil {
			t.Fatalf("%s: Signature-Input %q", r.path, r.input)
		}
		if created, _ := strconv.ParseInt(m[2], 10, 64); created < newClock().Now().Unix() || created > clk.Now().Unix() {
			t.Errorf("%s: created %d, not on the injected clock (%d at the end)", r.path, created, clk.Now().Unix())
		}
		base := fmt.Sprintf("\"@method\": %s\n\"@authority\": %s\n\"@path\": %s\n\"signature-agent\": %q\n\"@signature-params\": %s",
			r.method, r.host, r.path, agentURL, m[1])
		sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(r.signature, "sig1=:"), ":"))
		if err != nil || !ed25519.Verify(priv.Public().(ed25519.PublicKey), []byte(base), sig) {
			t.Errorf("%s: signature %q does not verify over\n%s", r.path, r.signature, base)
		}
		if r.agent != `"`+agentURL+`"` {
			t.Errorf("%s: Signature-Agent %q", r.path, r.agent)
		}
		if nonces[m[3]] {
			t.Errorf("%s: nonce reused", r.path)
		}
		nonces[m[3]] = true
	}
}
