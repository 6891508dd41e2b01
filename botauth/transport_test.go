package botauth_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/robots/botauth"
	"github.com/crawlkit/robots/internal/fakeclock"
)

const testAgent = "https://crawler.example" + botauth.WellKnownPath

// newKey returns a key made from a seed of n repeated.
func newKey(n byte) botauth.Key {
	return botauth.Key{Private: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))}
}

func publicKeys(keys ...botauth.Key) map[string]ed25519.PublicKey {
	m := map[string]ed25519.PublicKey{}
	for _, k := range keys {
		m[k.Thumbprint()] = k.Private.Public().(ed25519.PublicKey)
	}
	return m
}

// newRecordingServer starts a server that records every request and
// answers "ok".
func newRecordingServer(t *testing.T) (*httptest.Server, *recorder) {
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})))
	t.Cleanup(srv.Close)
	return srv, rec
}

func TestTransportSignsEachRequestForItsOwnTarget(t *testing.T) {
	for _, form := range []botauth.AgentForm{botauth.AgentDictionary, botauth.AgentString} {
		clock := fakeclock.New()
		key := newKey(1)
		signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{key}, Agent: testAgent, AgentForm: form, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		srv, rec := newRecordingServer(t)
		client := &http.Client{Transport: signer}
		reqs := []struct{ method, path string }{{"GET", "/"}, {"HEAD", "/a%2Fb/c"}, {"POST", "/form?q=1"}, {"GET", ""}}
		for _, r := range reqs {
			req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(""))
			req.Header.Set("Signature", "stale=:AAAA:") // replaced, not kept
			before := req.Header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(req.Header) != len(before) || req.Header.Get("Signature") != "stale=:AAAA:" || req.Header.Get("Signature-Input") != "" {
				t.Errorf("form %d: the caller's request was changed: %v", form, req.Header)
			}
			clock.Advance(time.Second)
		}
		nonces := map[string]bool{}
		host := strings.TrimPrefix(srv.URL, "http://")
		for i, got := range rec.requests() {
			v, err := verifyRequest(got, publicKeys(key), clock.Now())
			if err != nil {
				t.Fatalf("form %d, request %d: %v", form, i, err)
			}
			wantPath := strings.SplitN(reqs[i].path, "?", 2)[0]
			if wantPath == "" {
				wantPath = "/"
			}
			if v.covered[`"@method"`] != reqs[i].method || v.covered[`"@authority"`] != host || v.covered[`"@path"`] != wantPath {
				t.Errorf("form %d, request %d covers %v, want %s %s %s", form, i, v.covered, reqs[i].method, host, wantPath)
			}
			if v.agent != testAgent || v.keyid != key.Thumbprint() || v.label != botauth.DefaultLabel {
				t.Errorf("form %d, request %d: agent %q keyid %q label %q", form, i, v.agent, v.keyid, v.label)
			}
			if d := v.expires.Sub(v.created); d != botauth.DefaultLifetime {
				t.Errorf("form %d: lifetime %v, want %v", form, d, botauth.DefaultLifetime)
			}
			if nonces[v.nonce] || len(v.nonce) != 88 {
				t.Errorf("form %d, request %d: nonce %q repeated or not 64 bytes", form, i, v.nonce)
			}
			nonces[v.nonce] = true
		}
		if wantField := map[botauth.AgentForm]string{
			botauth.AgentDictionary: `sig1="` + testAgent + `"`,
			botauth.AgentString:     `"` + testAgent + `"`,
		}[form]; rec.requests()[0].Headers["signature-agent"] != wantField {
			t.Errorf("form %d: Signature-Agent %q, want %q", form, rec.requests()[0].Headers["signature-agent"], wantField)
		}
	}
}

// TestTransportSignsTheOpaquePathSent: a request whose URL.Opaque names
// the request-target is signed over the path net/http sends from it,
// the origin form's and the absolute form's alike.
func TestTransportSignsTheOpaquePathSent(t *testing.T) {
	clock := fakeclock.New()
	key := newKey(1)
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{key}, Agent: testAgent, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := newRecordingServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, opaque := range []string{"/a%2Fb", "//" + host + "/op%2Faque/x"} {
		req := &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: host, Opaque: opaque}, Header: http.Header{}, Host: host}
		resp, err := signer.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for i, got := range rec.requests() {
		if _, err := verifyRequest(got, publicKeys(key), clock.Now()); err != nil {
			t.Errorf("request %d (%s): %v", i, got.path, err)
		}
	}
}

// failingBase is a base RoundTripper that must not be reached.
type failingBase struct{ t *testing.T }

func (b failingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.t.Errorf("a request went out unsigned: %s", r.URL)
	return nil, errors.New("sent")
}

type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestTransportDoesNotSendWhatItCannotSign(t *testing.T) {
	clock := fakeclock.New()
	now := clock.Now()
	tests := []struct {
		name    string
		keys    []botauth.Key
		url     string
		wantErr error
	}{
		{"key not yet valid", []botauth.Key{{Private: newKey(1).Private, NotBefore: now.Add(time.Hour)}}, "http://site.test/", botauth.ErrNoKey},
		{"key ends before the signature would", []botauth.Key{{Private: newKey(1).Private, Expires: now.Add(time.Minute)}}, "http://site.test/", botauth.ErrNoKey},
		{"no host", []botauth.Key{newKey(1)}, "http:///path", nil},
		{"a Host net/http would not send", []botauth.Key{newKey(1)}, "http://site.test/", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer, err := botauth.NewTransport(failingBase{t}, botauth.Options{Keys: tt.keys, Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			body := &closeTracker{Reader: strings.NewReader("x")}
			req, _ := http.NewRequest("POST", tt.url, body)
			if strings.HasPrefix(tt.name, "a Host") {
				req.Host = "site.test/path"
			}
			resp, err := signer.RoundTrip(req)
			if resp != nil || err == nil || !strings.HasPrefix(err.Error(), "botauth: ") {
				t.Fatalf("RoundTrip = %v, %v; want no response and a botauth error", resp, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if !body.closed {
				t.Error("the request body was left open")
			}
			t.Log(err)
		})
	}
	var zero botauth.Transport
	if _, err := zero.Sign(httptest.NewRequest("GET", "http://site.test/", nil)); !errors.Is(err, botauth.ErrNoKey) {
		t.Errorf("zero Transport: %v, want ErrNoKey", err)
	}
}

func TestNewTransportRejectsBadOptions(t *testing.T) {
	other := newKey(2)
	tests := []struct {
		name string
		opts botauth.Options
	}{
		{"no keys", botauth.Options{}},
		{"only a public key", botauth.Options{Keys: []botauth.Key{{Public: other.Private.Public().(ed25519.PublicKey)}}}},
		{"public half of another key", botauth.Options{Keys: []botauth.Key{{Private: newKey(1).Private, Public: other.Private.Public().(ed25519.PublicKey)}}}},
		{"short private key", botauth.Options{Keys: []botauth.Key{{Private: make(ed25519.PrivateKey, 10)}}}},
		{"private key whose second half is another's", botauth.Options{Keys: []botauth.Key{{Private: append(newKey(1).Private.Seed(), other.Private.Public().(ed25519.PublicKey)...)}}}},
		{"all-zero private key", botauth.Options{Keys: []botauth.Key{{Private: make(ed25519.PrivateKey, ed25519.PrivateKeySize)}}}},
		{"http agent", botauth.Options{Keys: []botauth.Key{other}, Agent: "http://crawler.example/"}},
		{"relative agent", botauth.Options{Keys: []botauth.Key{other}, Agent: "/.well-known/x"}},
		{"agent with a control character", botauth.Options{Keys: []botauth.Key{other}, Agent: "https://crawler.example/\x7f"}},
		{"agent with a space", botauth.Options{Keys: []botauth.Key{other}, Agent: "https://crawler.example/a b"}},
		{"agent with a quote", botauth.Options{Keys: []botauth.Key{other}, Agent: `https://crawler.example/a"b`}},
		{"agent with userinfo", botauth.Options{Keys: []botauth.Key{other}, Agent: "https://user@crawler.example/"}},
		{"agent with a fragment", botauth.Options{Keys: []botauth.Key{other}, Agent: "https://crawler.example/dir#keys"}},
		{"label not a key", botauth.Options{Keys: []botauth.Key{other}, Label: "Sig1"}},
		{"negative lifetime", botauth.Options{Keys: []botauth.Key{other}, Lifetime: -time.Second}},
		{"unknown form", botauth.Options{Keys: []botauth.Key{other}, Agent: testAgent, AgentForm: 7}},
		{"unknown form for a site", botauth.Options{Keys: []botauth.Key{other}, Agent: testAgent, AgentForms: map[string]botauth.AgentForm{"site.example": -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := botauth.NewTransport(nil, tt.opts); err == nil || !strings.HasPrefix(err.Error(), "botauth: ") {
				t.Errorf("NewTransport = %v, want a botauth error", err)
			}
		})
	}
}

// TestTransportRotatesKeys follows a rotation: the new key is published
// with a NotBefore ahead, takes over signing at NotBefore, and the old
// one stops signing once its signatures would outlive it.
func TestTransportRotatesKeys(t *testing.T) {
	clock := fakeclock.New()
	start := clock.Now()
	old := botauth.Key{Private: newKey(1).Private, Expires: start.Add(2 * time.Hour)}
	next := botauth.Key{Private: newKey(2).Private, NotBefore: start.Add(time.Hour)}
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{old, next}, Now: clock.Now, Lifetime: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   time.Duration
		want botauth.Key
	}{
		{0, old},
		{time.Hour - time.Second, old},
		{time.Hour, next},
		{3 * time.Hour, next},
	} {
		clock.Advance(step.at - clock.Now().Sub(start))
		req, err := signer.Sign(httptest.NewRequest("GET", "http://site.test/", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req.Header.Get("Signature-Input"), `keyid="`+step.want.Thumbprint()+`"`) {
			t.Errorf("at +%v signed %s, want key %s", step.at, req.Header.Get("Signature-Input"), step.want.Thumbprint())
		}
	}
	// The old key alone: it stops once a signature would outlive it.
	clock = fakeclock.New()
	alone, _ := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{old}, Now: clock.Now, Lifetime: time.Minute})
	clock.Advance(2*time.Hour - time.Minute)
	if _, err := alone.Sign(httptest.NewRequest("GET", "http://site.test/", nil)); err != nil {
		t.Errorf("a signature ending at the key's Expires: %v", err)
	}
	clock.Advance(time.Second)
	if _, err := alone.Sign(httptest.NewRequest("GET", "http://site.test/", nil)); !errors.Is(err, botauth.ErrNoKey) {
		t.Errorf("a signature outliving the key: %v, want ErrNoKey", err)
	}
}

// TestTransportConcurrentUse signs from many goroutines at once (run
// with -race): each request gets its own nonce.
func TestTransportConcurrentUse(t *testing.T) {
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{newKey(1)}, Agent: testAgent})
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	inputs := make(chan string, n)
	for range n {
		go func() {
			req, err := signer.Sign(httptest.NewRequest("GET", "http://site.test/", nil))
			if err != nil {
				t.Error(err)
				inputs <- ""
				return
			}
			inputs <- req.Header.Get("Signature-Input")
		}()
	}
	seen := map[string]bool{}
	for range n {
		in := <-inputs
		if seen[in] {
			t.Errorf("two requests signed alike: %s", in)
		}
		seen[in] = true
	}
}

// TestTransportSignsARequestWithoutHeaders checks that a request with no
// header map, which net/http sends, is signed rather than panicking, and
// that the caller's request keeps none.
func TestTransportSignsARequestWithoutHeaders(t *testing.T) {
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{newKey(1)}, Agent: testAgent})
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := newRecordingServer(t)
	req := httptest.NewRequest(http.MethodGet, srv.URL+"/page", nil)
	req.Header, req.RequestURI = nil, ""
	resp, err := signer.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := rec.requests(); len(got) != 1 || got[0].Headers["signature"] == "" || got[0].Headers["signature-input"] == "" {
		t.Errorf("sent %v, want one signed request", got)
	}
	if req.Header != nil {
		t.Errorf("the caller's request was given headers: %v", req.Header)
	}
}

// TestTransportCoversThePriceOffered checks that a request offering a
// pay-per-crawl price carries a signature covering it, as the site takes
// the price only under the crawler's signature: the signature verifies,
// and fails for the same request with another price.
func TestTransportCoversThePriceOffered(t *testing.T) {
	clock := fakeclock.New()
	key := newKey(3)
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{key}, Agent: testAgent, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := newRecordingServer(t)
	for _, h := range []string{"Crawler-Exact-Price", "Crawler-Max-Price"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/paid", nil)
		req.Header.Set(h, "USD 0.01")
		resp, err := (&http.Client{Transport: signer}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for i, r := range rec.requests() {
		name := []string{"crawler-exact-price", "crawler-max-price"}[i]
		v, err := verifyRequest(r, publicKeys(key), clock.Now())
		if err != nil || v.covered[`"`+name+`"`] != "USD 0.01" {
			t.Errorf("%s: %v, covered %v; want the price covered and the signature valid", name, err, v.covered)
		}
		r.Headers[name] = "USD 0.00"
		if _, err := verifyRequest(r, publicKeys(key), clock.Now()); err == nil {
			t.Errorf("%s: the signature still verifies with another price", name)
		}
	}
}
