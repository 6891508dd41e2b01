package botauth_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/botauth"
)

// challengingSite answers every page 403 with accept until a request
// carries a signature under the label asked, verified, whose nonce is
// the site's; with always, it challenges the answer too. It records the
// pages' requests and when each came.
type challengingSite struct {
	accept, label, nonce string
	always               bool
	key                  botauth.Key

	base  *timingSigner
	rec   recorder
	mu    sync.Mutex
	times []time.Time
	errs  []error
}

func (s *challengingSite) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		s.rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})).ServeHTTP(w, r)
		got := s.rec.requests()
		v, err := verifyRequest(got[len(got)-1], publicKeys(s.key), time.Now())
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		if err != nil {
			s.errs = append(s.errs, err)
		}
		s.mu.Unlock()
		if s.always || err != nil || v.label != s.label || v.nonce != s.nonce {
			w.Header().Set("Accept-Signature", s.accept)
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "sign as asked")
			return
		}
		io.WriteString(w, "welcome")
	})
}

func challengedClient(t *testing.T, site *challengingSite, minDelay time.Duration) (*http.Client, string) {
	t.Helper()
	srv := httptest.NewServer(site.handler())
	t.Cleanup(srv.Close)
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{site.key}, Agent: testAgent})
	if err != nil {
		t.Fatal(err)
	}
	site.base = &timingSigner{Transport: signer}
	// A generous ceiling on each request: only a loop reaches it.
	return &http.Client{Timeout: time.Minute, Transport: robots.NewTransport(site.base, robots.Options{UserAgent: "TestBot/1.0", MinDelay: minDelay})}, srv.URL
}

// timingSigner records when each page request is handed to the signer,
// where the robots transport's spacing holds; it passes Answer on, as a
// wrapper of an Answerer must.
type timingSigner struct {
	*botauth.Transport
	mu    sync.Mutex
	sends []time.Time
}

func (s *timingSigner) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path != "/robots.txt" {
		s.mu.Lock()
		s.sends = append(s.sends, time.Now())
		s.mu.Unlock()
	}
	return s.Transport.RoundTrip(req)
}

// TestChallengeIsAnsweredOnceAsAsked: a site answering 403 with
// Accept-Signature (a label, components, its nonce, the key) gets exactly
// one more request, signed with those, no sooner than the origin's delay
// after the first.
func TestChallengeIsAnsweredOnceAsAsked(t *testing.T) {
	key := newKey(9)
	site := &challengingSite{
		label: "sig2", nonce: "site-nonce-123", key: key,
		accept: `sig2=("@method" "@authority" "@path" "@query" "@target-uri" "signature-agent";key="sig2");keyid="` + key.Thumbprint() + `";nonce="site-nonce-123";tag="web-bot-auth"`,
	}
	const delay = 300 * time.Millisecond
	client, base := challengedClient(t, site, delay)
	resp, err := client.Get(base + "/page?x=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "welcome" {
		t.Fatalf("got %d %q; want the page after one answer", resp.StatusCode, body)
	}
	got := site.rec.requests()
	if len(got) != 2 {
		t.Fatalf("the site saw %d page requests; want 2, the first and the answer", len(got))
	}
	v, err := verifyRequest(got[1], publicKeys(key), time.Now())
	if err != nil {
		t.Fatalf("the answer does not verify: %v", err)
	}
	want := []string{`"@method"`, `"@authority"`, `"@path"`, `"@query"`, `"@target-uri"`, `"signature-agent";key="sig2"`}
	if v.label != "sig2" || v.nonce != "site-nonce-123" || len(v.covered) != len(want) {
		t.Errorf("the answer: label %s, nonce %s, covered %v; want sig2, the site's nonce, %v", v.label, v.nonce, v.covered, want)
	}
	for _, id := range want {
		if _, ok := v.covered[id]; !ok {
			t.Errorf("the answer does not cover %s", id)
		}
	}
	if sends := site.base.sends; len(sends) != 2 || sends[1].Sub(sends[0]) < delay {
		t.Errorf("page requests handed on at %v; want two, the answer the origin's delay, %v, after the first", sends, delay)
	}
}

func TestChallengeNotAnsweredEndsWithItsError(t *testing.T) {
	key := newKey(10)
	tests := []struct {
		name, accept string
		always       bool
		requests     int
		reason       string
	}{
		{"challenged again", `sig2=("@method" "@authority" "@path");nonce="n"`, true, 2, "challenged again"},
		{"a field the request lacks", `sig2=("@method" "content-digest")`, false, 1, "content-digest"},
		{"a parameter the signer cannot give", `sig2=("@method" "@query-param";name="q")`, false, 1, "name"},
		{"another algorithm", `sig2=("@method");alg="rsa-pss-sha512"`, false, 1, "rsa-pss-sha512"},
		{"a key the signer lacks", `sig2=("@method");keyid="someone-else"`, false, 1, "someone-else"},
		{"a field that is no Dictionary", `("@method")`, false, 1, "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := &challengingSite{label: "sig2", nonce: "n", key: key, accept: tt.accept, always: tt.always}
			client, base := challengedClient(t, site, -1)
			_, err := client.Get(base + "/page")
			var ce *botauth.ChallengeError
			if !errors.As(err, &ce) {
				t.Fatalf("GET = %v; want a *ChallengeError", err)
			}
			if ce.AcceptSignature != tt.accept || !strings.Contains(ce.Reason, tt.reason) || ce.Response == nil || ce.Response.StatusCode != http.StatusForbidden {
				t.Errorf("ChallengeError %+v; want what was asked, a reason naming %q, the 403", ce, tt.reason)
			}
			if b, _ := io.ReadAll(ce.Response.Body); string(b) != "sign as asked" {
				t.Errorf("the challenge's body %q; want it kept for the caller", b)
			}
			if n := len(site.rec.requests()); n != tt.requests {
				t.Errorf("the site saw %d page requests; want %d: never a loop", n, tt.requests)
			}
		})
	}
}

// TestChallengeAnswerCoversThePriceOffered: an answer to a challenge on
// a request that offers a price covers the price field, asked or not, as
// every signature of such a request does: the site takes a price only
// under the crawler's signature.
func TestChallengeAnswerCoversThePriceOffered(t *testing.T) {
	key := newKey(11)
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{key}, Agent: testAgent})
	if err != nil {
		t.Fatal(err)
	}
	for _, header := range []string{"Crawler-Exact-Price", "Crawler-Max-Price"} {
		req := httptest.NewRequest("GET", "http://site.example/page", nil)
		req.Header.Set(header, "USD 0.01")
		resp := &http.Response{StatusCode: http.StatusUnauthorized, Request: req, Body: http.NoBody, Header: http.Header{
			"Accept-Signature": {`sig2=("@method" "@authority" "@path" "signature-agent");nonce="n";tag="web-bot-auth"`},
		}}
		answer, err := signer.Answer(req, resp)
		if err != nil || answer == nil {
			t.Fatalf("%s: Answer = %v, %v; want a signed request", header, answer, err)
		}
		signed, err := signer.Sign(answer)
		if err != nil {
			t.Fatalf("%s: Sign(answer): %v", header, err)
		}
		if in := signed.Header.Get("Signature-Input"); !strings.HasPrefix(in, "sig2=") || !strings.Contains(in, `"`+strings.ToLower(header)+`"`) {
			t.Errorf("%s: the answer's Signature-Input %s does not cover the price offered", header, in)
		}
	}
}

// TestChallengeForAKeyOutOfItsWindow: a challenge naming a key the
// signer holds but cannot sign with now (expired, or not yet begun) is a
// *ChallengeError saying so, with the site's response, as a key it does
// not hold is.
func TestChallengeForAKeyOutOfItsWindow(t *testing.T) {
	now := time.Now()
	valid := newKey(12)
	expired := botauth.Key{Private: newKey(13).Private, Expires: now.Add(-time.Hour)}
	early := botauth.Key{Private: newKey(14).Private, NotBefore: now.Add(time.Hour)}
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{valid, expired, early}, Agent: testAgent})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []botauth.Key{expired, early} {
		req := httptest.NewRequest("GET", "http://site.example/page", nil)
		resp := &http.Response{StatusCode: http.StatusUnauthorized, Request: req, Body: io.NopCloser(strings.NewReader("sign as asked")), Header: http.Header{
			"Accept-Signature": {`sig2=("@method" "@authority" "@path");keyid="` + k.Thumbprint() + `"`},
		}}
		answer, err := signer.Answer(req, resp)
		var ce *botauth.ChallengeError
		if answer != nil || !errors.As(err, &ce) || !strings.Contains(ce.Reason, "cannot sign now") || ce.Response != resp {
			t.Errorf("key %s: Answer = %v, %v; want a *ChallengeError saying the key cannot sign now", k.Thumbprint(), answer, err)
		}
	}
}
