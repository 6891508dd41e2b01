package robots

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkit/robots/policy"
)

// ErrDisallowed is what every request refused because of robots.txt
// matches with errors.Is, whether a rule refused it or the origin's
// robots.txt was unreachable. Through an http.Client it arrives wrapped in a
// *url.Error, which errors.Is sees through.
var ErrDisallowed = errors.New("robots: disallowed by robots.txt")

// DisallowedError explains why a request was not sent. Use errors.As to get
// it from the error of RoundTrip, Check or an http.Client.
type DisallowedError struct {
	// URL is the refused URL, with any password redacted.
	URL string
	// Token is the product token whose groups refused the URL: the first
	// of the crawler's tokens that has a group, else its most specific
	// token ("*" when it has none).
	Token string
	// Rule is the rule that refused the URL, nil when the origin's
	// robots.txt was unreachable instead.
	Rule *policy.Rule
	// Resolved is, when Rule or Preference refused not the request-URI
	// as it would be sent but a form a server serves it as (dot segments resolved,
	// "/public/../private" as "/private"; repeated slashes merged
	// first, "/public//../private" as "/private"; or %2F decoded where
	// that makes dot segments, "/public/..%2fprivate" as "/private"),
	// that form's path and query; empty otherwise.
	Resolved string
	// Unreachable reports whether the URL was refused because the
	// origin's robots.txt could not be fetched (RFC 9309 section 2.3.1.4).
	Unreachable bool
	// RetryAt is, when Unreachable, the time from which the transport
	// fetches the robots.txt again; requests before it are refused
	// without a fetch.
	RetryAt time.Time
	// Err is, when Unreachable, the network or server error of the last
	// fetch. It is deliberately not returned by Unwrap, so that
	// errors.Is(err, context.DeadlineExceeded) speaks only of the
	// caller's own context.
	Err error
	// Label is, when the site's AI usage preferences refused the URL
	// (see ByPreference and Options.Purposes), the first declared
	// purpose ("train-ai"); empty otherwise.
	Label string
	// Preference is then the line that stated "n" for Label, with its
	// Source (Content-Usage or Content-Signal) and line number; nil
	// otherwise.
	Preference *policy.PreferenceLine
	// Preferences are the site's AI usage preferences for the URL, on
	// every refusal made under a parsed robots.txt; nil when the origin's
	// robots.txt was unreachable.
	Preferences *policy.Preferences
}

// Error says which rule on which line refused the URL, or that the
// origin's robots.txt is unreachable and when it is retried. It leaves the
// URL out: an http.Client wraps the error in a *url.Error that names it
// already ("Get \"http://x/p\": robots: refused for ..."); the URL field
// holds it for callers of RoundTrip and Check.
func (e *DisallowedError) Error() string {
	var b strings.Builder
	b.WriteString("robots: refused for ")
	b.WriteString(e.Token)
	switch {
	case e.Rule != nil:
		b.WriteString(" by ")
		b.WriteString(e.Rule.String())
		if e.Resolved != "" {
			b.WriteString(" (resolved as ")
			b.WriteString(e.Resolved)
			b.WriteString(")")
		}
	case e.Unreachable:
		b.WriteString(": robots.txt unreachable")
		if e.Err != nil {
			b.WriteString(" (")
			b.WriteString(strings.TrimPrefix(e.Err.Error(), "robots: "))
			b.WriteString(")")
		}
		if !e.RetryAt.IsZero() {
			b.WriteString("; retry after ")
			b.WriteString(e.RetryAt.UTC().Format(time.RFC3339))
		}
	case e.Preference != nil:
		b.WriteString(e.preferenceDetail())
		if e.Resolved != "" {
			b.WriteString(" (resolved as ")
			b.WriteString(e.Resolved)
			b.WriteString(")")
		}
	}
	return b.String()
}

// Is reports whether target is ErrDisallowed.
func (e *DisallowedError) Is(target error) bool { return target == ErrDisallowed }

// SlotError is the error of a request whose politeness slot lies past its
// context's deadline, less a tenth of the time left for the request
// itself, or further away than the wait WithMaxWait allows: the request
// fails at once, holding no slot. In a fleet the other members' slots are
// known only as the store hands them out, so a request counts a delay per
// waiter ahead of it in its own process, and fails as soon as the store's
// answers put its slot past the limit. It matches
// context.DeadlineExceeded, so callers that test for a deadline need
// nothing new; a crawler that reads it can requeue the URL for At.
type SlotError struct {
	// Origin is the origin as the Transport keys it
	// ("https://site.example:8443"; see OriginKey).
	Origin string
	// At is when the request's slot would have been.
	At time.Time
	// Left is how long the request's deadline was away when its slot was
	// refused (0 without one).
	Left time.Duration
	// MaxWait is, when WithMaxWait's bound refused the slot, that bound
	// (0 for a bound of 0, or when the deadline refused it).
	MaxWait time.Duration
	// wait is how far the slot was, on the Transport's clock.
	wait time.Duration
}

// Error says which origin's slot was how far away, and the deadline's or
// the longest wait allowed.
func (e *SlotError) Error() string {
	if e.MaxWait > 0 || e.Left == 0 {
		return fmt.Sprintf("robots: the politeness slot for %s is %v away, past the longest wait allowed (%v): %v",
			e.Origin, e.wait, e.MaxWait, context.DeadlineExceeded)
	}
	return fmt.Sprintf("robots: the politeness slot for %s is %v away, past the request's deadline less a tenth of the time it had left as it began to wait, kept for the send (%v left): %v",
		e.Origin, e.wait, e.Left.Round(time.Millisecond), context.DeadlineExceeded)
}

// Unwrap returns context.DeadlineExceeded.
func (e *SlotError) Unwrap() error { return context.DeadlineExceeded }
