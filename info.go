package robots

import (
	"context"
	"net/url"
	"time"

	"github.com/crawlkit/robots/policy"
)

// RobotsInfo is the robots state of one origin as a transport holds it.
type RobotsInfo struct {
	// Origin is scheme://host[:port], the host lower-cased and in ASCII
	// form and a default port left out.
	Origin string
	// Outcome is what the last robots.txt fetch came to.
	Outcome Outcome
	// StatusCode is the HTTP status of the last fetch after redirects, 0
	// when no answer arrived.
	StatusCode int
	// Policy is the parsed robots.txt in force, with its sitemaps and
	// crawl-delays. It is nil when every request is allowed (unavailable)
	// or refused (unreachable).
	Policy *policy.Robots
	// FetchedAt is when the last fetch finished; Expires, for a parsed or
	// unavailable robots.txt, when it goes stale and is fetched again.
	FetchedAt, Expires time.Time
	// RetryAt is, when unreachable, when the robots.txt is fetched again.
	RetryAt time.Time
	// UnreachableSince is, when unreachable, when the current run of
	// failed fetches began.
	UnreachableSince time.Time
	// Fallback reports whether the origin has been unreachable for
	// Options.FallbackAfter, so that the last good copy (Policy, or every
	// request allowed when that copy was unavailable or there is none) is
	// in force instead of refusing everything.
	Fallback bool
	// Err is, when unreachable, the network or server error of the last
	// fetch.
	Err error
	// Size is how many bytes of robots.txt the last good fetch kept,
	// decoded, never more than Options.MaxSize; Truncated reports whether
	// content past Options.MaxSize was ignored.
	Size      int64
	Truncated bool
	// Body is the text of the last good robots.txt as it was parsed:
	// decoded and cut to Options.MaxSize at a line end. It is nil when the
	// last good fetch was not parsed, and shared: it must not be modified.
	Body []byte
	// Sitemaps are the Sitemap lines of Policy as absolute http or https
	// URLs, relative ones resolved against the URL the robots.txt was
	// finally read from, after redirects; lines that do not resolve to
	// one are left out.
	Sitemaps []string
	// Delay is the least time between two requests to the origin: the
	// transport's minimum raised by the crawler's Crawl-delay.
	Delay time.Duration
}

// Robots returns the robots state of rawURL's origin, fetching its
// robots.txt through the same cache as RoundTrip when it is not already
// held, so that a crawler can read the sitemaps without a second request.
// The crawl delay is the one of the crawler's own tokens; without any
// (Options names none) it is the one of the "*" groups. A URL that
// robots.txt does not govern gets an error matching ErrNotHTTP, as from
// Check.
func (t *Transport) Robots(ctx context.Context, rawURL string) (RobotsInfo, error) {
	t.init()
	u, err := parseHTTP(rawURL)
	if err != nil {
		return RobotsInfo{}, err
	}
	tg, err := targetFor(u, "")
	if err != nil {
		return RobotsInfo{}, err
	}
	o := t.origins.originFor(tg.id)
	st, now, err := t.origins.state(ctx, o, t.cfg.now())
	if err != nil {
		return RobotsInfo{}, err
	}
	rules := st.rules(now, t.cfg.fallbackAfter)
	info := RobotsInfo{
		Origin:     o.key,
		Outcome:    st.rec.Outcome,
		StatusCode: st.rec.Status,
		Policy:     rules.robots,
		FetchedAt:  st.rec.FetchedAt,
		Fallback:   rules.fallback,
		Delay:      t.pacer.delayFor(rules.robots.Agent(t.cfg.tokens...)),
	}
	good := st.rec
	if st.rec.Outcome == Unreachable {
		info.RetryAt, info.UnreachableSince, info.Err = st.rec.RetryAt, st.rec.Since, st.err
		good = record{}
		if st.rec.Good != nil {
			good = *st.rec.Good
		}
	} else {
		info.Expires = st.rec.Expires
	}
	info.Size, info.Truncated = min(good.Size, int64(t.cfg.maxSize)), good.Truncated
	if good.Outcome == Parsed {
		info.Body = good.Body
	}
	// Relative lines resolve against where the file was finally read
	// from, after redirects (RFC 3986 section 5.1.3).
	base, _ := o.id.robotsURL()
	if read, err := url.Parse(good.URL); err == nil && good.URL != "" {
		base = read
	}
	info.Sitemaps = sitemaps(rules.robots, base)
	return info, nil
}

// sitemaps returns the Sitemap lines of r resolved against robotsURL,
// keeping only those that come to an http or https URL with a host.
func sitemaps(r *policy.Robots, robotsURL *url.URL) []string {
	if r == nil || robotsURL == nil || len(r.Sitemaps()) == 0 {
		return nil
	}
	out := make([]string, 0, len(r.Sitemaps()))
	for _, s := range r.Sitemaps() {
		u, err := robotsURL.Parse(s)
		if err != nil || !isHTTP(u.Scheme) || u.Host == "" {
			continue
		}
		out = append(out, u.String())
	}
	return out
}
