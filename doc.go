// Package robots makes an http.Client obey robots.txt. Wrap the client's
// transport and every request it sends is first checked against the
// robots.txt of its origin (RFC 9309), then paced politely:
//
//	client := &http.Client{Transport: robots.NewTransport(http.DefaultTransport, robots.Options{
//		UserAgent: "ExampleBot/1.0 (+https://example.com/bot)",
//	})}
//	resp, err := client.Get("https://site.example/private/page")
//	if errors.Is(err, robots.ErrDisallowed) {
//		// The request never left the client.
//	}
//
// For each origin (scheme, host and port) the Transport fetches
// /robots.txt once, shared by all goroutines, and keeps it for 24 hours, or
// less when its Cache-Control max-age (less its Age) says so but never less
// than a minute (Options.MinFreshness), then revalidates it with its own
// conditional GET (ETag and Last-Modified kept in the origin's record). A
// 2xx robots.txt is parsed, its first 500 KiB only; a 4xx (except 429)
// one allows everything; a 429, 5xx, timeout or network
// error refuses everything and is retried on a back-off schedule, until
// after 30 days of failures the last good copy is used. Redirects are
// followed up to five hops.
//
// A request is decided on its path and query exactly as sent, and also
// with dot segments resolved and with repeated slashes merged first, for
// the product token of Options.UserAgent
// or Options.Agents, or, when Options names neither, of the request's own
// User-Agent (package policy does the matching). A refused request
// is not sent: its error matches ErrDisallowed and holds a
// *DisallowedError naming the rule and its line. An allowed request waits
// for the origin's politeness slot: Options.MinDelay, raised by the
// robots.txt's Crawl-delay and paused by a 429 or 503 Retry-After.
//
// A site's robots.txt can also say what a crawler may do with the content
// (Content-Usage and Content-Signal lines): Preferences reads them for a
// URL and ResponsePreferences adds a page's Content-Usage header; with
// Options.Purposes, a URL whose site says "n" for every purpose declared,
// in any form of the URL a server may serve, is refused too, its
// DisallowedError naming the label, the line and the form. Purposes are
// labels in any letter case or Content-Signal's keys ("ai-train"); an
// unknown one makes every request fail with ErrUnknownPurpose.
//
// Check answers the same question without sending anything, for a crawl
// frontier; Robots gives an origin's parsed robots.txt and its sitemaps;
// both answer a URL that robots.txt does not govern (another scheme than
// http or https) with an error matching ErrNotHTTP. Stats counts what the
// transport did. Time comes from Options.Now and
// waits go through Options.Sleep, so tests can cross days instantly.
//
// Memory is bounded in bytes: the parsed robots.txt held in memory by
// Options.MaxRobotsBytes (and Options.MaxOrigins), the default store by
// 128 MiB. Options.Cache keeps one record per origin; Options.Fleet, a
// store shared by a fleet of processes (redisstore.Store, MemoryFleet),
// lets them share one fetch and one pace per origin instead. Plug-ins' panics are contained: one of the base
// RoundTripper during a robots.txt fetch is logged with its stack and the
// origin counts as unreachable for that fetch; one of the Cache is logged
// and taken as a missing record or a lost write; one of the Logger loses
// only that log line.
package robots
