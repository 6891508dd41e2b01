package botauth_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/botauth"
)

// signedDirectory starts the crawler's key directory on a TLS server, as
// verifiers fetch it, and returns it with the Agent URL naming it.
func signedDirectory(t *testing.T, opts botauth.DirectoryOptions) (*httptest.Server, string) {
	t.Helper()
	dir, err := botauth.NewDirectory(opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(botauth.WellKnownPath, dir)
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv, srv.URL + botauth.WellKnownPath
}

// TestCrawlSignsRobotsFetchPageAndRedirectHop crawls, through
// robots.NewTransport over the signer, a page that redirects once to
// another site: the server sees a valid signature on each robots.txt
// fetch, on the page and on the hop, each over its own authority and
// path, with distinct nonces. Where Node.js and the npm package are
// installed, Cloudflare's verifier checks the same requests.
func TestCrawlSignsRobotsFetchPageAndRedirectHop(t *testing.T) {
	type crawl struct {
		form   botauth.AgentForm
		dirSrv *httptest.Server
		got    []received
	}
	var crawls []crawl
	for _, form := range []botauth.AgentForm{botauth.AgentDictionary, botauth.AgentString} {
		key := newKey(3)
		dirSrv, agent := signedDirectory(t, botauth.DirectoryOptions{Keys: []botauth.Key{key}})
		rec := &recorder{}
		other := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, "User-agent: *\nAllow: /\n")
				return
			}
			io.WriteString(w, "page "+r.URL.Path)
		})))
		t.Cleanup(other.Close)
		// The first site's host is given as localhost, so the hop crosses
		// to another authority as well as another path.
		first := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			case "/old":
				http.Redirect(w, r, other.URL+"/new", http.StatusMovedPermanently)
			default:
				http.NotFound(w, r)
			}
		})))
		t.Cleanup(first.Close)
		firstURL := strings.Replace(first.URL, "127.0.0.1", "localhost", 1)

		signer, err := botauth.NewTransport(http.DefaultTransport, botauth.Options{Keys: []botauth.Key{key}, Agent: agent, AgentForm: form})
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: robots.NewTransport(signer, robots.Options{UserAgent: "TestBot/1.0", MinDelay: -1})}
		resp, err := client.Get(firstURL + "/old")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "page /new" {
			t.Fatalf("crawl ended at %q", body)
		}

		got := rec.requests()
		want := []struct{ host, path string }{
			{strings.TrimPrefix(firstURL, "http://"), "/robots.txt"},
			{strings.TrimPrefix(firstURL, "http://"), "/old"},
			{strings.TrimPrefix(other.URL, "http://"), "/robots.txt"},
			{strings.TrimPrefix(other.URL, "http://"), "/new"},
		}
		if len(got) != len(want) {
			t.Fatalf("the sites saw %d requests, want %d: %+v", len(got), len(want), got)
		}
		nonces := map[string]bool{}
		for i, r := range got {
			v, err := verifyRequest(r, publicKeys(key), time.Now())
			if err != nil {
				t.Fatalf("form %d, %s: %v", form, r.URL, err)
			}
			if v.covered[`"@authority"`] != want[i].host || v.covered[`"@path"`] != want[i].path {
				t.Errorf("form %d, request %d covers %s %s, want %s %s", form, i, v.covered[`"@authority"`], v.covered[`"@path"`], want[i].host, want[i].path)
			}
			if nonces[v.nonce] {
				t.Errorf("form %d, request %d reuses nonce %s", form, i, v.nonce)
			}
			nonces[v.nonce] = true
		}

		crawls = append(crawls, crawl{form, dirSrv, got})
	}

	t.Run("npm verifier", func(t *testing.T) {
		npm := requireNPM(t)
		for _, c := range crawls {
			rep := npm.verify(t, c.dirSrv, c.got)
			for i, res := range rep.Results {
				if !res.OK {
					t.Errorf("form %d: the npm verifier rejected %s: %s", c.form, c.got[i].URL, res.Error)
				}
			}
		}
	})
}

// TestPaidRequestCoversItsPrice crawls a page a site charges for through
// robots.NewTransport over the signer: the paid request carries
// crawler-exact-price under a valid signature that covers it.
func TestPaidRequestCoversItsPrice(t *testing.T) {
	key := newKey(11)
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case r.Header.Get("Crawler-Exact-Price") == "USD 0.01":
			w.Header().Set("Crawler-Charged", "USD 0.01")
			io.WriteString(w, "paid")
		default:
			w.Header().Set("Crawler-Price", "USD 0.01")
			w.WriteHeader(http.StatusPaymentRequired)
		}
	})))
	t.Cleanup(srv.Close)
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{key}, Agent: testAgent})
	if err != nil {
		t.Fatal(err)
	}
	pay := robots.Payment{MaxPrice: robots.MustParsePrice("USD 0.01"), Budget: robots.MustParsePrice("USD 1")}
	client := &http.Client{Timeout: time.Minute, Transport: robots.NewTransport(signer, robots.Options{UserAgent: "TestBot/1.0", MinDelay: -1, Payment: pay})}
	resp, err := client.Get(srv.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := rec.requests()
	paid := got[len(got)-1]
	v, err := verifyRequest(paid, publicKeys(key), time.Now())
	if err != nil || v.covered[`"crawler-exact-price"`] != "USD 0.01" {
		t.Errorf("the paid request: %v, covering %v; want a valid signature over crawler-exact-price", err, v.covered)
	}
}
