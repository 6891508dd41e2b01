package botauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/botauth"
)

// TestCardSaysWhatTheTransportDoes serves the card of transports set up
// differently: each claim follows the setting it stands for.
func TestCardSaysWhatTheTransportDoes(t *testing.T) {
	tests := []struct {
		name       string
		opts       robots.Options
		token      string
		purpose    string
		rate       string
		compliance []string
	}{
		{"defaults", robots.Options{UserAgent: "ExampleBot/1.0 (+https://crawler.example/bot)"},
			"ExampleBot", "", "max=1rps per origin", []string{"User-Agent", "Allow", "Disallow", "CrawlDelay"}},
		{"slower, with purposes enforced", robots.Options{UserAgent: "ExampleBot/1.0", Agents: []string{"examplebot-news"}, Purposes: []string{"search"}, MinDelay: 4 * time.Second},
			"examplebot-news", "search", "max=0.25rps per origin", []string{"User-Agent", "Allow", "Disallow", "CrawlDelay", "Content-Usage", "Content-Signal"}},
		{"unpaced, Crawl-delay ignored", robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1, MaxCrawlDelay: -1},
			"ExampleBot", "", "", []string{"User-Agent", "Allow", "Disallow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := robots.NewTransport(nil, tt.opts)
			c, err := botauth.NewCard(botauth.CardOptions{
				ClientID:   "https://crawler.example" + botauth.CardPath,
				Name:       "Example Bot",
				Contacts:   []string{"mailto:bots@crawler.example"},
				JWKSURI:    testAgent,
				WebBotAuth: tr.WebBotAuth(),
			})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			c.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, botauth.CardPath, nil))
			if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || ct != botauth.CardMediaType {
				t.Fatalf("GET: %d %s", rec.Code, ct)
			}
			var got struct {
				ClientID   string   `json:"client_id"`
				Name       string   `json:"client_name"`
				Contacts   []string `json:"contacts"`
				JWKSURI    string   `json:"jwks_uri"`
				WebBotAuth struct {
					UserAgent  string   `json:"expected-user-agent"`
					Token      string   `json:"rfc9309-product-token"`
					Compliance []string `json:"rfc9309-compliance"`
					Trigger    string   `json:"trigger"`
					Purpose    string   `json:"purpose"`
					Rate       string   `json:"rate-expectation"`
					Known      []string `json:"known-urls"`
				} `json:"web_bot_auth"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("the card is not JSON: %v\n%s", err, rec.Body)
			}
			w := got.WebBotAuth
			if got.ClientID != "https://crawler.example"+botauth.CardPath || got.JWKSURI != testAgent || got.Name != "Example Bot" || len(got.Contacts) != 1 {
				t.Errorf("the card's client metadata: %+v", got)
			}
			if w.UserAgent != tt.opts.UserAgent || w.Token != tt.token || w.Purpose != tt.purpose || w.Rate != tt.rate ||
				!slices.Equal(w.Compliance, tt.compliance) || w.Trigger != "crawler" || !slices.Equal(w.Known, []string{"/robots.txt"}) {
				t.Errorf("web_bot_auth %+v; want user agent %q, token %q, purpose %q, rate %q, compliance %v",
					w, tt.opts.UserAgent, tt.token, tt.purpose, tt.rate, tt.compliance)
			}
		})
	}
}

func TestCardRejectsWhatCannotIdentifyTheCrawler(t *testing.T) {
	ok := botauth.CardOptions{ClientID: "https://crawler.example" + botauth.CardPath, JWKSURI: testAgent}
	for name, edit := range map[string]func(*botauth.CardOptions){
		"no client id":        func(o *botauth.CardOptions) { o.ClientID = "" },
		"http client id":      func(o *botauth.CardOptions) { o.ClientID = "http://crawler.example/card" },
		"no key directory":    func(o *botauth.CardOptions) { o.JWKSURI = "" },
		"relative about page": func(o *botauth.CardOptions) { o.About = "/about" },
		"contact not a URI":   func(o *botauth.CardOptions) { o.Contacts = []string{"bots at crawler.example"} },
		"not JSON":            func(o *botauth.CardOptions) { o.WebBotAuth = func() {} },
	} {
		opts := ok
		edit(&opts)
		if _, err := botauth.NewCard(opts); err == nil {
			t.Errorf("%s: NewCard accepted %+v", name, opts)
		}
	}
	c, err := botauth.NewCard(ok)
	if err != nil {
		t.Fatal(err)
	}
	for method, want := range map[string]int{http.MethodHead: http.StatusOK, http.MethodPost: http.StatusMethodNotAllowed} {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(method, botauth.CardPath, nil))
		if rec.Code != want || method == http.MethodHead && rec.Body.Len() != 0 {
			t.Errorf("%s: %d with %d bytes; want %d", method, rec.Code, rec.Body.Len(), want)
		}
	}
}
