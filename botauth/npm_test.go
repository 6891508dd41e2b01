package botauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/robots/botauth"
	"github.com/crawlkit/robots/internal/skipnote"
)

// npmVerifier runs Cloudflare's web-bot-auth verifier (the npm package,
// installed in testdata/verifier by `npm ci`) under Debian's Node.js.
type npmVerifier struct {
	node string
	dir  string
}

// requireNPM returns the npm verifier, or skips the test saying what is
// missing and how to install it; under CI=true a missing verifier fails
// the test instead.
func requireNPM(t *testing.T) *npmVerifier {
	t.Helper()
	dir, err := filepath.Abs("testdata/verifier")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	var what, how string
	switch {
	case err != nil:
		what, how = "node", "apt-get install nodejs npm, then npm ci in botauth/testdata/verifier"
	case !exists(filepath.Join(dir, "node_modules", "web-bot-auth", "package.json")):
		what, how = "npm package web-bot-auth", "npm ci in botauth/testdata/verifier"
	}
	if what != "" {
		skipnote.Require(t, what, how)
	}
	return &npmVerifier{node: node, dir: dir}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// npmReport is verify.mjs's answer.
type npmReport struct {
	Directories map[string]struct {
		OK       bool     `json:"ok"`
		Error    string   `json:"error"`
		SignedBy []string `json:"signedBy"`
	} `json:"directories"`
	Results []struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		Form  string `json:"form"`
		KeyID string `json:"keyid"`
		Nonce string `json:"nonce"`
	} `json:"results"`
}

// verify has the npm verifier check reqs, fetching key directories from
// dirServer, whose certificate it is told to trust.
func (v *npmVerifier) verify(t *testing.T, dirServer *httptest.Server, reqs []received) npmReport {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: dirServer.Certificate().Raw})
	if err := os.WriteFile(ca, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		t.Fatal(err)
	}
	// A generous ceiling: only a hung verifier (a fetch of the directory
	// that never ends, say) reaches it.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, v.node, "verify.mjs")
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = v.dir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v\n%s", err, stderr.Bytes())
	}
	var rep npmReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("node verify.mjs answered %q: %v", out, err)
	}
	if len(rep.Results) != len(reqs) {
		t.Fatalf("node verify.mjs answered %d results for %d requests", len(rep.Results), len(reqs))
	}
	return rep
}

// signedRequests sends requests to a fresh recording server through a
// signer made from opts and returns them as the server received them.
func signedRequests(t *testing.T, opts botauth.Options, paths ...string) []received {
	t.Helper()
	signer, err := botauth.NewTransport(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := newRecordingServer(t)
	for _, p := range paths {
		resp, err := (&http.Client{Transport: signer}).Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	return rec.requests()
}

// TestNPMVerifierAcceptsAndRejects has Cloudflare's verifier fetch the
// directory a Directory serves and check requests the Transport signed,
// in both Signature-Agent forms: valid ones pass; a tampered request, an
// expired signature and a key the directory does not hold are rejected.
func TestNPMVerifierAcceptsAndRejects(t *testing.T) {
	npm := requireNPM(t)
	key, stranger := newKey(4), newKey(5)
	dirSrv, agent := signedDirectory(t, botauth.DirectoryOptions{Keys: []botauth.Key{key}})
	for _, form := range []botauth.AgentForm{botauth.AgentDictionary, botauth.AgentString} {
		opts := botauth.Options{Keys: []botauth.Key{key}, Agent: agent, AgentForm: form}
		valid := signedRequests(t, opts, "/", "/a/b?q=1", "/docs/./a", "/docs/%2E%2e/c")

		tamperedPath := valid[1]
		tamperedPath.URL = strings.Replace(tamperedPath.URL, "/a/b", "/a/c", 1)
		tamperedMethod := valid[0]
		tamperedMethod.Method = "DELETE"
		tamperedAuthority := valid[0]
		tamperedAuthority.URL = strings.Replace(tamperedAuthority.URL, "127.0.0.1", "localhost", 1)

		expiredOpts := opts
		expiredOpts.Now = func() time.Time { return time.Now().Add(-time.Hour) }
		expiredOpts.Lifetime = time.Minute
		unknownOpts := opts
		unknownOpts.Keys = []botauth.Key{stranger}

		cases := []struct {
			name   string
			req    received
			wantOK bool
			reason string // a word of the verifier's error
		}{
			{"valid root", valid[0], true, ""},
			{"valid path with query", valid[1], true, ""},
			{"valid path with a dot segment", valid[2], true, ""},
			{"valid path with an escaped dot-dot segment", valid[3], true, ""},
			{"tampered path", tamperedPath, false, "invalid signature"},
			{"tampered method", tamperedMethod, false, "invalid signature"},
			{"tampered authority", tamperedAuthority, false, "invalid signature"},
			{"expired", signedRequests(t, expiredOpts, "/")[0], false, "expired"},
			{"unknown key", signedRequests(t, unknownOpts, "/")[0], false, "unknown key"},
		}
		reqs := make([]received, len(cases))
		for i, c := range cases {
			reqs[i] = c.req
		}
		rep := npm.verify(t, dirSrv, reqs)
		if d := rep.Directories[agent]; !d.OK || len(d.SignedBy) != 1 || d.SignedBy[0] != key.Thumbprint() {
			t.Errorf("form %d: the npm verifier's view of the directory: %+v", form, d)
		}
		for i, c := range cases {
			res := rep.Results[i]
			if res.OK != c.wantOK || !c.wantOK && !strings.Contains(res.Error, c.reason) {
				t.Errorf("form %d, %s: npm verifier ok=%v error %q, want ok=%v (%s)", form, c.name, res.OK, res.Error, c.wantOK, c.reason)
			}
		}
	}
}

// TestNPMVerifierThroughKeyRotation rotates from one key to the next as
// the draft describes, checking with Cloudflare's verifier at each step
// that every request signed so far still verifies against the directory
// as it then stands. (That the directory drops the old key once it
// expires is TestDirectoryPublishesKeysThroughRotation's.)
//
// The npm verifier reads the real clock, so the steps are laid out in the
// few minutes before now: signatures made at each step are still valid
// when it checks them.
func TestNPMVerifierThroughKeyRotation(t *testing.T) {
	npm := requireNPM(t)
	real := time.Now().Truncate(time.Second)
	const lifetime = 5 * time.Minute
	old := botauth.Key{Private: newKey(6).Private, NotBefore: real.Add(-time.Hour), Expires: real.Add(-2*time.Minute + lifetime)}
	next := botauth.Key{Private: newKey(7).Private, NotBefore: real.Add(-3 * time.Minute), Expires: real.Add(time.Hour)}

	var dirNow time.Time
	dirSrv, agent := signedDirectory(t, botauth.DirectoryOptions{Keys: []botauth.Key{old, next}, Now: func() time.Time { return dirNow }})
	var signNow time.Time
	signer, err := botauth.NewTransport(nil, botauth.Options{Keys: []botauth.Key{old, next}, Agent: agent, Lifetime: lifetime, Now: func() time.Time { return signNow }})
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := newRecordingServer(t)
	steps := []struct {
		name string
		at   time.Duration // before real now
		want botauth.Key
	}{
		{"old key signs, new key published ahead", -4 * time.Minute, old},
		{"new key's window opens: it signs", -3 * time.Minute, next},
		{"old key still published", -2 * time.Minute, next},
	}
	for i, s := range steps {
		signNow, dirNow = real.Add(s.at), real.Add(s.at)
		resp, err := (&http.Client{Transport: signer}).Get(srv.URL + "/step")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := rec.requests()
		rep := npm.verify(t, dirSrv, reqs)
		if got := rep.Results[i].KeyID; got != s.want.Thumbprint() {
			t.Errorf("%s: signed with %s, want %s", s.name, got, s.want.Thumbprint())
		}
		for j, res := range rep.Results {
			if !res.OK {
				t.Errorf("%s: request %d rejected: %s", s.name, j, res.Error)
			}
		}
	}
}

// TestNPMVerifierAcceptsTheDefaultAndTheOverride signs as the README's
// lines do, with no AgentForm, and with one site overridden to the
// working group's form: the default goes out as the bare String and
// Cloudflare's verifier accepts it as sent; the overridden site alone
// gets the Dictionary, which verifies too (narrowed to its member, as a
// verifier on that package must).
func TestNPMVerifierAcceptsTheDefaultAndTheOverride(t *testing.T) {
	npm := requireNPM(t)
	key := newKey(8)
	dirSrv, agent := signedDirectory(t, botauth.DirectoryOptions{Keys: []botauth.Key{key}})
	srv, rec := newRecordingServer(t)
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	signer, err := botauth.NewTransport(nil, botauth.Options{
		Keys:       []botauth.Key{key},
		Agent:      agent,
		AgentForms: map[string]botauth.AgentForm{strings.TrimPrefix(other, "http://"): botauth.AgentDictionary},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{srv.URL + "/page", other + "/page"} {
		resp, err := (&http.Client{Transport: signer}).Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := rec.requests()
	if len(got) != 2 {
		t.Fatalf("the server saw %d requests, want 2", len(got))
	}
	for i, want := range []string{`"` + agent + `"`, `sig1="` + agent + `"`} {
		if f := got[i].Headers["signature-agent"]; f != want {
			t.Errorf("request %d (%s): Signature-Agent %s, want %s", i, got[i].URL, f, want)
		}
	}
	if in := got[0].Headers["signature-input"]; strings.Contains(in, ";key=") {
		t.Errorf("the default form covers a component parameter: %s", in)
	}
	for i, res := range npm.verify(t, dirSrv, got).Results {
		if !res.OK {
			t.Errorf("request %d (%s) rejected by the npm verifier: %s", i, got[i].URL, res.Error)
		}
	}
}
