package botauth

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// testKey is the Ed25519 key of RFC 9421 appendix B.1.4, read from its
// PKCS #8 PEM.
func testKey(t *testing.T) Key {
	t.Helper()
	pem, err := os.ReadFile("testdata/rfc9421-b14-ed25519.pem")
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// unwrap undoes RFC 8792 single-backslash line wrapping as the RFC and
// the draft print their examples: a line ending in "\" continues on the
// next, whose leading spaces are dropped.
func unwrap(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	var b strings.Builder
	cont := false
	for _, l := range lines {
		if cont {
			l = strings.TrimLeft(l, " ")
		} else if b.Len() > 0 {
			b.WriteByte('\n')
		}
		cont = strings.HasSuffix(l, `\`)
		b.WriteString(strings.TrimSuffix(l, `\`))
	}
	return b.String()
}

// TestRFC9421B26 reproduces RFC 9421 appendix B.2.6, signing a request
// with Ed25519: the signature base and the signature, byte for byte.
func TestRFC9421B26(t *testing.T) {
	components := []component{
		{componentID("date"), "Tue, 20 Apr 2021 02:07:55 GMT"},
		{componentID("@method"), "POST"},
		{componentID("@path"), "/foo"},
		{componentID("@authority"), "example.com"},
		{componentID("content-type"), "application/json"},
		{componentID("content-length"), "18"},
	}
	params := []param{numParam("created", 1618884473), strParam("keyid", "test-key-ed25519")}
	wantBase := unwrap(`
"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" \
  "content-type" "content-length");created=1618884473\
  ;keyid="test-key-ed25519"`)
	if got := signatureBase(components, signatureParams(components, params)); got != wantBase {
		t.Errorf("signature base:\n%s\nwant:\n%s", got, wantBase)
	}
	s := sign(testKey(t).Private, "sig-b26", components, params)
	if want := `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`; s.input != want {
		t.Errorf("Signature-Input: %s\nwant: %s", s.input, want)
	}
	if want := unwrap(`
sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vu\
  Qv5lIp5WPpBKRCw==:`); s.signature != want {
		t.Errorf("Signature: %s\nwant: %s", s.signature, want)
	}
}

// TestDraftEd25519Vectors reproduces the Ed25519 test vectors of
// draft-ietf-webbotauth-httpsig-protocol ("EdDSA Using Curve
// edwards25519"): Signature-Agent as a Dictionary member and, the legacy
// form, as a bare String; signature base, Signature-Input and Signature
// byte for byte.
func TestDraftEd25519Vectors(t *testing.T) {
	const agent = "https://signature-agent.test"
	tests := []struct {
		name      string
		agentID   string
		expires   int64
		nonce     string
		base      string
		signature string
	}{{
		name:    "dictionary member",
		agentID: componentID("signature-agent", strParam("key", "agent2")),
		expires: 4889289600,
		nonce:   "n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==",
		base: `
"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2")\
 ;created=1735689600\
 ;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"\
 ;alg="ed25519"\
 ;expires=4889289600\
 ;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA=="\
 ;tag="web-bot-auth"`,
		signature: "sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:",
	}, {
		name:    "legacy string",
		agentID: componentID("signature-agent"),
		expires: 1735693200,
		nonce:   "e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==",
		base: `
"@authority": example.com
"signature-agent": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent")\
 ;created=1735689600\
 ;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"\
 ;alg="ed25519"\
 ;expires=1735693200\
 ;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg=="\
 ;tag="web-bot-auth"`,
		signature: "sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:",
	}}
	key := testKey(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			components := []component{
				{componentID("@authority"), "example.com"},
				{tt.agentID, sfString(agent)},
			}
			params := []param{
				numParam("created", 1735689600),
				strParam("keyid", key.Thumbprint()),
				strParam("alg", "ed25519"),
				numParam("expires", tt.expires),
				strParam("nonce", tt.nonce),
				strParam("tag", Tag),
			}
			base := unwrap(tt.base)
			if got := signatureBase(components, signatureParams(components, params)); got != base {
				t.Errorf("signature base:\n%s\nwant:\n%s", got, base)
			}
			s := sign(key.Private, "sig2", components, params)
			if want := "sig2=" + strings.TrimPrefix(base[strings.LastIndexByte(base, '\n')+1:], `"@signature-params": `); s.input != want {
				t.Errorf("Signature-Input: %s\nwant: %s", s.input, want)
			}
			if s.signature != tt.signature {
				t.Errorf("Signature: %s\nwant: %s", s.signature, tt.signature)
			}
		})
	}
}

// TestDraftSignedDirectoryVector serves the draft's "Signed Directory
// Response" example from a Directory holding the test key, and checks
// the body, Content-Digest, Signature-Input and Signature byte for byte.
func TestDraftSignedDirectoryVector(t *testing.T) {
	created := time.Unix(1735689600, 0)
	d, err := NewDirectory(DirectoryOptions{
		Keys:              []Key{testKey(t)},
		Now:               func() time.Time { return created },
		SignatureLifetime: time.Unix(4889289600, 0).Sub(created),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "http://signature-agent.test"+WellKnownPath, nil)
	req.Header.Set("Accept", DirectoryMediaType)
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, req)
	want := map[string]string{
		"body":            `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`,
		"Content-Type":    DirectoryMediaType,
		"Content-Digest":  "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:",
		"Signature-Input": `binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`,
		"Signature":       "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:",
	}
	for name, w := range want {
		got := rec.Header().Get(name)
		if name == "body" {
			got = rec.Body.String()
		}
		if got != w {
			t.Errorf("%s:\n%s\nwant:\n%s", name, got, w)
		}
	}
}

// TestThumbprintRFC8037 checks the thumbprint of RFC 8037 appendix A.3's
// key, and that of the RFC 9421 test key which the draft's vectors use
// as keyid.
func TestThumbprintRFC8037(t *testing.T) {
	k, err := ParseKey([]byte(`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := k.Thumbprint(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Errorf("RFC 8037 A.3 thumbprint %s, want %s", got, want)
	}
	if got, want := testKey(t).Thumbprint(), "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"; got != want {
		t.Errorf("RFC 9421 B.1.4 key thumbprint %s, want %s", got, want)
	}
}
