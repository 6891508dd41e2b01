package botauth_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/botauth"
)

// A crawler signs every request it sends, robots.txt fetches and redirect
// hops included, by putting the signer under the robots transport.
func ExampleNewTransport() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("%s %s\n  Signature-Agent: %s\n  covers %s\n", r.Method, r.URL.Path,
			r.Header.Get("Signature-Agent"), strings.SplitN(r.Header.Get("Signature-Input"), ";created=", 2)[0])
	}))
	defer site.Close()

	pem, err := os.ReadFile("testdata/rfc9421-b14-ed25519.pem") // a test key: never in production
	if err != nil {
		log.Fatal(err)
	}
	key, err := botauth.ParseKey(pem)
	if err != nil {
		log.Fatal(err)
	}

	signer, err := botauth.NewTransport(http.DefaultTransport, botauth.Options{
		Keys:  []botauth.Key{key},
		Agent: "https://crawler.example" + botauth.WellKnownPath,
	})
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: robots.NewTransport(signer, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1})}

	resp, err := client.Get(site.URL + "/page")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	// Output:
	// GET /robots.txt
	//   Signature-Agent: "https://crawler.example/.well-known/http-message-signatures-directory"
	//   covers sig1=("@method" "@authority" "@path" "signature-agent")
	// GET /page
	//   Signature-Agent: "https://crawler.example/.well-known/http-message-signatures-directory"
	//   covers sig1=("@method" "@authority" "@path" "signature-agent")
}

// The crawler's domain serves its key directory at the well-known path,
// signed by each key it publishes.
func ExampleNewDirectory() {
	jwk, err := os.ReadFile("testdata/rfc9421-b14-ed25519.jwk") // a test key: never in production
	if err != nil {
		log.Fatal(err)
	}
	key, err := botauth.ParseKey(jwk)
	if err != nil {
		log.Fatal(err)
	}
	key.Expires = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	dir, err := botauth.NewDirectory(botauth.DirectoryOptions{
		Keys: []botauth.Key{key},
		Now:  func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(botauth.WellKnownPath, dir)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + botauth.WellKnownPath)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"))
	fmt.Println(string(body))
	fmt.Println(strings.SplitN(resp.Header.Get("Signature-Input"), ";keyid=", 2)[0])
	// Output:
	// application/http-message-signatures-directory+json
	// {"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig","exp":1798761600}]}
	// binding=("@authority";req "content-digest");created=1796083200;expires=1796169600
}

// ParseKey reads a PKCS #8 PEM or a JWK; Thumbprint is the keyid its
// signatures carry.
func ExampleParseKey() {
	key, err := botauth.ParseKey([]byte(`{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(key.Thumbprint(), key.Private == nil)
	// Output:
	// poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U true
}

// Sign gives a signed clone of a request for a caller that sends it some
// other way; the original is left as it was. The site here verifies the
// working group's form, so AgentForms names it for that site alone.
func ExampleTransport_Sign() {
	pem, err := os.ReadFile("testdata/rfc9421-b14-ed25519.pem") // a test key: never in production
	if err != nil {
		log.Fatal(err)
	}
	key, err := botauth.ParseKey(pem)
	if err != nil {
		log.Fatal(err)
	}
	signer, err := botauth.NewTransport(nil, botauth.Options{
		Keys:  []botauth.Key{key},
		Agent: "https://crawler.example" + botauth.WellKnownPath,
		// The working group's form, for a site whose verifier follows
		// draft-ietf-webbotauth-httpsig-protocol-01.
		AgentForms: map[string]botauth.AgentForm{"site.example": botauth.AgentDictionary},
		Now:        func() time.Time { return time.Unix(1796083200, 0) },
		Lifetime:   time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "https://site.example/page?id=1", nil)
	signed, err := signer.Sign(req)
	if err != nil {
		log.Fatal(err)
	}
	in := signed.Header.Get("Signature-Input")
	fmt.Println(signed.Header.Get("Signature-Agent"))
	fmt.Println(in[:strings.Index(in, ";nonce=")])
	fmt.Println(req.Header.Get("Signature-Input") == "")
	// Output:
	// sig1="https://crawler.example/.well-known/http-message-signatures-directory"
	// sig1=("@method" "@authority" "@path" "signature-agent";key="sig1");created=1796083200;expires=1796083260;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
	// true
}

// A site that wants a signature of its own asks with Accept-Signature.
// Under robots.Transport the answer is sent for you, once and paced; a
// caller sending through the signer alone asks Answer for it.
func ExampleTransport_Answer() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Signature-Input"), `nonce="from-the-site"`) {
			w.Header().Set("Accept-Signature", `sig2=("@method" "@authority" "@path" "@query");nonce="from-the-site"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Println("signed as asked:", strings.SplitN(r.Header.Get("Signature-Input"), ";created=", 2)[0])
	}))
	defer site.Close()

	pem, err := os.ReadFile("testdata/rfc9421-b14-ed25519.pem") // a test key: never in production
	if err != nil {
		log.Fatal(err)
	}
	key, err := botauth.ParseKey(pem)
	if err != nil {
		log.Fatal(err)
	}
	signer, err := botauth.NewTransport(http.DefaultTransport, botauth.Options{Keys: []botauth.Key{key}})
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, site.URL+"/page?id=1", nil)
	resp, err := signer.RoundTrip(req)
	if err != nil {
		log.Fatal(err)
	}
	answer, err := signer.Answer(req, resp)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	if resp, err = signer.RoundTrip(answer); err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	// Output:
	// signed as asked: sig2=("@method" "@authority" "@path" "@query")
}

// The Signature Agent Card says what the crawler does, generated from the
// robots transport's own settings, and is served beside the key
// directory.
func ExampleNewCard() {
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", Purposes: []string{"search"}, MinDelay: 2 * time.Second})
	card, err := botauth.NewCard(botauth.CardOptions{
		ClientID:   "https://crawler.example" + botauth.CardPath,
		Name:       "Example Bot",
		Contacts:   []string{"mailto:bots@crawler.example"},
		JWKSURI:    "https://crawler.example" + botauth.WellKnownPath,
		WebBotAuth: tr.WebBotAuth(),
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(botauth.CardPath, card)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, botauth.CardPath, nil))
	fmt.Print(rec.Body)
	// Output:
	// {
	//   "client_id": "https://crawler.example/.well-known/signature-agent-card",
	//   "client_name": "Example Bot",
	//   "contacts": [
	//     "mailto:bots@crawler.example"
	//   ],
	//   "jwks_uri": "https://crawler.example/.well-known/http-message-signatures-directory",
	//   "web_bot_auth": {
	//     "expected-user-agent": "ExampleBot/1.0",
	//     "rfc9309-product-token": "ExampleBot",
	//     "rfc9309-compliance": [
	//       "User-Agent",
	//       "Allow",
	//       "Disallow",
	//       "CrawlDelay",
	//       "Content-Usage",
	//       "Content-Signal"
	//     ],
	//     "trigger": "crawler",
	//     "purpose": "search",
	//     "rate-control": "429 and 503 with Retry-After; Crawl-delay in robots.txt, up to 30s",
	//     "rate-expectation": "max=0.5rps per origin",
	//     "known-urls": [
	//       "/robots.txt"
	//     ]
	//   }
	// }
}
