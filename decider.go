package robots

import (
	"errors"
	"log/slog"
	"time"

	"github.com/crawlkit/robots/policy"
)

// decider decides requests under an origin's robots state, and counts and
// logs what it decides. It holds no state of its own and is safe for
// concurrent use.
type decider struct {
	tokens        []string // Options.Agents, or the product token of Options.UserAgent
	purposes      []string // Options.Purposes
	fallbackAfter time.Duration
	logger        *slog.Logger
	stats         *counters
}

// decide returns the *DisallowedError refusing tg under st at now, or nil
// with the groups that allowed it. Every form of the request-URI that a
// server may serve must be allowed: as sent, with dot segments resolved,
// and with repeated slashes merged first. A request for /robots.txt
// itself is always allowed, and st may then be nil.
func (d *decider) decide(st *state, tg *wireTarget, now time.Time) (policy.Agent, error) {
	var own [1]string
	tokens := d.tokensFor(tg, own[:0])
	if tg.robotsTxt {
		// Allowed, but paced like any request by the groups in force.
		var agent policy.Agent
		if st != nil {
			agent, _ = st.agent(now, d.fallbackAfter, tokens)
		}
		return agent, nil
	}
	agent, refuse := st.agent(now, d.fallbackAfter, tokens)
	var e *DisallowedError
	switch {
	case refuse:
		e = &DisallowedError{URL: tg.url.Redacted(), Token: primaryToken(tokens), Unreachable: true, RetryAt: st.rec.RetryAt, Err: st.err}
	case !agent.Allowed(tg.uri):
		// Refused: only now is the explanation worth building.
		dec := agent.Decide(tg.uri)
		rule := dec.Rule // a copy, so that dec itself stays off the heap
		prefs := agent.Preferences(tg.uri)
		e = &DisallowedError{URL: tg.url.Redacted(), Token: refusedFor(dec.Token, tokens), Rule: &rule, Resolved: dec.Resolved, Preferences: &prefs}
	default:
		// Preferences are read only for a crawler that declared its
		// purposes: reporting them costs nothing on an allowed request.
		if len(d.purposes) > 0 {
			if p, out := agent.OptedOut(tg.uri, d.purposes...); out {
				line, prefs := p.From[0], agent.Preferences(tg.uri)
				e = &DisallowedError{URL: tg.url.Redacted(), Token: refusedFor(agent.Token(), tokens), Resolved: p.Resolved, Label: p.Label, Preference: &line, Preferences: &prefs}
				break
			}
		}
		return agent, nil
	}
	switch {
	case e.Rule != nil:
		d.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "rule", e.Rule.Directive(), "line", e.Rule.Line)
	case e.Preference != nil:
		d.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "label", e.Label, "preference", e.Preference.Directive(), "source", e.Preference.Source.String(), "line", e.Preference.Line)
	default:
		d.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "reason", "robots.txt unreachable", "retryAt", e.RetryAt)
	}
	return agent, e
}

// count counts a request's decision, err being the last decide gave it:
// once a request, however often the head of its line decided it again,
// and never a request for /robots.txt itself, which RobotsRequests
// counts as it is sent.
func (d *decider) count(robotsTxt bool, err error) {
	if robotsTxt {
		return
	}
	if e, refused := errors.AsType[*DisallowedError](err); refused {
		d.stats.refused(e)
		return
	}
	d.stats.allowed.Add(1)
}

// refusedFor names the product token a refusal speaks for: the one whose
// groups applied, or the crawler's own when only the * groups did.
func refusedFor(token string, tokens []string) string {
	if token == "" || token == "*" {
		return primaryToken(tokens)
	}
	return token
}

// tokensFor returns the product tokens tg is decided for: the crawler's
// own, or, when Options names none, the product token of the request's
// own User-Agent (as Scrapy does), appended to buf.
func (d *decider) tokensFor(tg *wireTarget, buf []string) []string {
	if len(d.tokens) > 0 {
		return d.tokens
	}
	if tok := policy.ProductToken(tg.header.Get("User-Agent")); tok != "" {
		return append(buf, tok)
	}
	return nil
}

// primaryToken is the most specific of tokens, or "*" without one.
func primaryToken(tokens []string) string {
	if len(tokens) > 0 {
		return tokens[0]
	}
	return "*"
}
