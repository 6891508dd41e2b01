package botauth_test

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/robots/botauth"
	"github.com/crawlkit/robots/internal/fakeclock"
)

type jwkSet struct {
	Keys []struct {
		Kty, Crv, Kid, X, Use string
		Nbf, Exp              int64
	}
}

func serve(t *testing.T, d *botauth.Directory, method string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(method, "https://crawler.example"+botauth.WellKnownPath, nil))
	return rec
}

// TestDirectoryPublishesKeysThroughRotation follows the draft's rotation:
// the new key is published before its window opens, both are published
// while the old one lasts, and the old one is removed once it expires.
func TestDirectoryPublishesKeysThroughRotation(t *testing.T) {
	clock := fakeclock.New()
	start := clock.Now()
	old := botauth.Key{Private: newKey(1).Private, Expires: start.Add(2 * time.Hour)}
	next := botauth.Key{Private: newKey(2).Private, NotBefore: start.Add(time.Hour)}
	d, err := botauth.NewDirectory(botauth.DirectoryOptions{Keys: []botauth.Key{old, next}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   time.Duration
		want []botauth.Key
	}{
		{0, []botauth.Key{old, next}},
		{2*time.Hour - time.Second, []botauth.Key{old, next}},
		{2 * time.Hour, []botauth.Key{next}},
	} {
		clock.Advance(step.at - clock.Now().Sub(start))
		rec := serve(t, d, "GET")
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != botauth.DirectoryMediaType {
			t.Fatalf("at +%v: %d %q", step.at, rec.Code, rec.Header().Get("Content-Type"))
		}
		var set jwkSet
		if err := json.Unmarshal(rec.Body.Bytes(), &set); err != nil {
			t.Fatal(err)
		}
		if len(set.Keys) != len(step.want) {
			t.Fatalf("at +%v: %d keys published, want %d: %s", step.at, len(set.Keys), len(step.want), rec.Body)
		}
		for i, k := range step.want {
			got := set.Keys[i]
			if got.Kid != k.Thumbprint() || got.Kty != "OKP" || got.Crv != "Ed25519" || got.Use != "sig" {
				t.Errorf("at +%v, key %d: %+v", step.at, i, got)
			}
			var wantNbf, wantExp int64
			if !k.NotBefore.IsZero() {
				wantNbf = k.NotBefore.Unix()
			}
			if !k.Expires.IsZero() {
				wantExp = k.Expires.Unix()
			}
			if got.Nbf != wantNbf || got.Exp != wantExp {
				t.Errorf("at +%v, key %d: nbf %d exp %d, want %d %d", step.at, i, got.Nbf, got.Exp, wantNbf, wantExp)
			}
		}
		// One signature per published key, each under its own label.
		if n := strings.Count(rec.Header().Get("Signature-Input"), `tag="http-message-signatures-directory"`); n != len(step.want) {
			t.Errorf("at +%v: %d directory signatures, want %d: %s", step.at, n, len(step.want), rec.Header().Get("Signature-Input"))
		}
		if !strings.Contains(rec.Header().Get("Signature-Input"), `keyid="`+step.want[len(step.want)-1].Thumbprint()+`"`) {
			t.Errorf("at +%v: Signature-Input %s", step.at, rec.Header().Get("Signature-Input"))
		}
	}
	// The old key's directory signature ends with the key.
	clock.Advance(-90 * time.Minute)
	if in := serve(t, d, "GET").Header().Get("Signature-Input"); !strings.Contains(in, "expires="+strconv.FormatInt(old.Expires.Unix(), 10)) {
		t.Errorf("the old key's directory signature outlives it: %s", in)
	}
}

func TestDirectoryMethodsAndEmptySet(t *testing.T) {
	d, err := botauth.NewDirectory(botauth.DirectoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := serve(t, d, "GET"); rec.Body.String() != `{"keys":[]}` || rec.Header().Get("Signature") != "" || rec.Header().Get("Cache-Control") != "max-age=3600" {
		t.Errorf("empty directory: %q %v", rec.Body, rec.Header())
	}
	pub := newKey(1).Private.Public().(ed25519.PublicKey)
	pubOnly, err := botauth.NewDirectory(botauth.DirectoryOptions{Keys: []botauth.Key{{Public: pub}}})
	if err != nil {
		t.Fatal(err)
	}
	if rec := serve(t, pubOnly, "GET"); !strings.Contains(rec.Body.String(), newKey(1).Thumbprint()) || rec.Header().Get("Signature") != "" {
		t.Errorf("a public-only key is published unsigned: %q %v", rec.Body, rec.Header())
	}
	if rec := serve(t, d, "HEAD"); rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "11" {
		t.Errorf("HEAD: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	if rec := serve(t, d, "POST"); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", rec.Code, rec.Header())
	}
	if _, err := botauth.NewDirectory(botauth.DirectoryOptions{MaxAge: -time.Second}); err == nil {
		t.Error("negative MaxAge accepted")
	}
}

func TestParseKey(t *testing.T) {
	pem, _ := os.ReadFile("testdata/rfc9421-b14-ed25519.pem")
	jwk, _ := os.ReadFile("testdata/rfc9421-b14-ed25519.jwk")
	const thumb = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
	tests := []struct {
		name        string
		in          string
		wantPrivate bool
		wantErr     string
	}{
		{"PKCS #8 PEM", string(pem), true, ""},
		{"private JWK", string(jwk), true, ""},
		{"public JWK", `{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`, false, ""},
		{"SPKI PEM", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n", false, ""},
		{"JWK of another curve", `{"kty":"OKP","crv":"X25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`, false, "Ed25519"},
		{"JWK whose d is not x's", `{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}`, false, "not one key pair"},
		{"JWK with a short x", `{"kty":"OKP","crv":"Ed25519","x":"AAAA"}`, false, `"x"`},
		{"broken JSON", `{"kty":`, false, "JWK"},
		{"RSA PEM type", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n", false, "PKCS #8"},
		{"garbage", "not a key", false, "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := botauth.ParseKey([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "botauth: ") {
					t.Errorf("ParseKey error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.Thumbprint() != thumb || (k.Private != nil) != tt.wantPrivate {
				t.Errorf("thumbprint %s private %v", k.Thumbprint(), k.Private != nil)
			}
		})
	}
	k, err := botauth.ParseKey([]byte(`{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","nbf":1712793600,"exp":1715385600}`))
	if err != nil || k.NotBefore.Unix() != 1712793600 || k.Expires.Unix() != 1715385600 {
		t.Errorf("JWK window: %v %v %v", k.NotBefore, k.Expires, err)
	}
}
