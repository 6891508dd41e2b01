package robots

import (
	"strconv"
	"strings"
	"time"
)

// WebBotAuth is the web_bot_auth object of a Signature Agent Card
// (draft-meunier-webbotauth-registry-03): what a crawler declares it does,
// for site operators to read beside its keys. Transport.WebBotAuth
// generates it from the transport's own settings, so that what the card
// claims is what the transport does; botauth.NewCard serves it.
type WebBotAuth struct {
	// ExpectedUserAgent is the User-Agent the crawler sends
	// (Options.UserAgent).
	ExpectedUserAgent string `json:"expected-user-agent,omitempty"`
	// ProductToken is the robots.txt product token it obeys groups for
	// (RFC 9309 section 2.2.1), the first of Options.Agents.
	ProductToken string `json:"rfc9309-product-token,omitempty"`
	// Compliance lists the robots.txt lines it follows.
	Compliance []string `json:"rfc9309-compliance,omitempty"`
	// Trigger is "crawler" (autonomous) or "fetcher" (a user's request).
	Trigger string `json:"trigger,omitempty"`
	// Purpose is the use it declares for what it fetches
	// (Options.Purposes, comma-separated).
	Purpose string `json:"purpose,omitempty"`
	// TargetedContent says what it looks for, in words.
	TargetedContent string `json:"targeted-content,omitempty"`
	// RateControl says how a site slows it down.
	RateControl string `json:"rate-control,omitempty"`
	// RateExpectation is the most it asks of one site.
	RateExpectation string `json:"rate-expectation,omitempty"`
	// KnownURLs are the paths it requests on every site.
	KnownURLs []string `json:"known-urls,omitempty"`
}

// webBotAuthOf returns what a transport of c does, as a Signature Agent
// Card declares it (see Transport.WebBotAuth).
func webBotAuthOf(c *config) WebBotAuth {
	w := WebBotAuth{
		ExpectedUserAgent: c.userAgent,
		Compliance:        []string{"User-Agent", "Allow", "Disallow"},
		Trigger:           "crawler",
		Purpose:           strings.Join(c.purposes, ","),
		RateControl:       "429 and 503 with Retry-After",
		KnownURLs:         []string{"/robots.txt"},
	}
	if len(c.tokens) > 0 {
		w.ProductToken = c.tokens[0]
	}
	if c.maxCrawlDelay > 0 {
		w.Compliance = append(w.Compliance, "CrawlDelay")
		w.RateControl += "; Crawl-delay in robots.txt, up to " + c.maxCrawlDelay.String()
	}
	if len(c.purposes) > 0 {
		w.Compliance = append(w.Compliance, "Content-Usage", "Content-Signal")
	}
	if c.minDelay > 0 {
		w.RateExpectation = "max=" + strconv.FormatFloat(float64(time.Second)/float64(c.minDelay), 'g', 4, 64) + "rps per origin"
	}
	return w
}
