package botauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// CardPath is where a Signature Agent Card is served by default, beside
// the key directory at WellKnownPath.
const CardPath = "/.well-known/signature-agent-card"

// CardMediaType is the media type a card is served with, as a Client ID
// Metadata Document is.
const CardMediaType = "application/json"

// CardOptions is what a Signature Agent Card says (the card of
// draft-meunier-webbotauth-registry-03, a Client ID Metadata Document
// with a web_bot_auth object). ClientID and JWKSURI are required.
type CardOptions struct {
	// ClientID is the https URL the card is served at, which names the
	// crawler: usually "https://<the crawler's domain>" + CardPath.
	ClientID string
	// Name is the crawler's friendly name ("Example Bot").
	Name string
	// About is the https URL of a page saying what the crawler does and
	// how it handles what it fetches.
	About string
	// Logo is the https URL of the crawler's logo.
	Logo string
	// Contacts are URIs to reach its operator ("mailto:bots@example.com").
	Contacts []string
	// JWKSURI is the https URL of the key directory: Options.Agent.
	JWKSURI string
	// WebBotAuth is the web_bot_auth object, what the crawler declares it
	// does: robots.Transport.WebBotAuth() generates it from the
	// transport's own settings. It is written as JSON as it is.
	WebBotAuth any
	// MaxAge is the Cache-Control max-age of the response. If zero,
	// DefaultDirectoryMaxAge.
	MaxAge time.Duration
}

// card is a Signature Agent Card as it is written.
type card struct {
	ClientID   string   `json:"client_id"`
	Name       string   `json:"client_name,omitempty"`
	About      string   `json:"client_uri,omitempty"`
	Logo       string   `json:"logo_uri,omitempty"`
	Contacts   []string `json:"contacts,omitempty"`
	JWKSURI    string   `json:"jwks_uri"`
	WebBotAuth any      `json:"web_bot_auth,omitempty"`
}

// Card is the http.Handler serving a crawler's Signature Agent Card: a
// JSON document naming the crawler (client_id, the URL it is served at),
// where its keys are (jwks_uri) and what it does (web_bot_auth), so that
// a site operator reads the crawler's claims beside its keys. It answers
// GET and HEAD at any path it is mounted on; mount it at the path of
// ClientID, usually CardPath. A Card is safe for concurrent use.
type Card struct {
	body   []byte
	maxAge int64 // seconds
}

// NewCard returns the Card opts describes. It reports an error for a
// ClientID or JWKSURI that is not an absolute https URL, another URL
// that is not one, or a WebBotAuth that is not JSON.
func NewCard(opts CardOptions) (*Card, error) {
	for _, u := range []struct{ name, url string }{{"ClientID", opts.ClientID}, {"JWKSURI", opts.JWKSURI}, {"About", opts.About}, {"Logo", opts.Logo}} {
		if u.url == "" && (u.name == "About" || u.name == "Logo") {
			continue
		}
		if p, err := url.Parse(u.url); err != nil || p.Scheme != "https" || p.Host == "" {
			return nil, fmt.Errorf("botauth: CardOptions.%s %q is not an absolute https URL", u.name, u.url)
		}
	}
	for _, c := range opts.Contacts {
		if p, err := url.Parse(c); err != nil || p.Scheme == "" {
			return nil, fmt.Errorf("botauth: CardOptions.Contacts: %q is not a URI (mailto:..., https://...)", c)
		}
	}
	body, err := json.MarshalIndent(card{
		ClientID: opts.ClientID, Name: opts.Name, About: opts.About, Logo: opts.Logo,
		Contacts: opts.Contacts, JWKSURI: opts.JWKSURI, WebBotAuth: opts.WebBotAuth,
	}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("botauth: CardOptions.WebBotAuth: %w", err)
	}
	maxAge := opts.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultDirectoryMaxAge
	}
	return &Card{body: append(body, '\n'), maxAge: int64(maxAge / time.Second)}, nil
}

// ServeHTTP answers GET and HEAD with the card.
func (c *Card) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "botauth: the signature agent card answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Content-Type", CardMediaType)
	h.Set("Cache-Control", "max-age="+strconv.FormatInt(c.maxAge, 10))
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Content-Length", strconv.Itoa(len(c.body)))
	if r.Method == http.MethodGet {
		w.Write(c.body)
	}
}
