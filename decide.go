package robots

import (
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
func (d *decider) decide(st *state, tg *target, now time.Time) (policy.Agent, error) {
	var own [1]string
	tokens := d.tokensFor(tg, own[:0])
	if tg.robotsTxt {
		// Allowed, but paced like any request by the groups in force.
		d.stats.robotsRequests.Add(1)
		var agent policy.Agent
		if st != nil {
			agent, _ = agentAt(st, now, d.fallbackAfter, tokens)
		}
		return agent, nil
	}
	agent, refuse := agentAt(st, now, d.fallbackAfter, tokens)
	var e *DisallowedError
	switch {
	case refuse:
		e = &DisallowedError{URL: tg.url.Redacted(), Token: primaryToken(tokens), Unreachable: true, RetryAt: st.rec.RetryAt, Err: st.err}
	case !agent.Allowed(tg.uri):
		// Refused: only now is the explanation worth building.
		dec := agent.Decide(tg.uri)
		token := dec.Token
		if token == "" || token == "*" {
			token = primaryToken(tokens)
		}
		rule := dec.Rule // a copy, so that dec itself stays off the heap
		e = &DisallowedError{URL: tg.url.Redacted(), Token: token, Rule: &rule, Resolved: dec.Resolved, Preferences: preferencesOf(agent, tg)}
	default:
		if e = d.byPreferences(agent, tg, tokens); e != nil {
			break
		}
		d.stats.allowed.Add(1)
		return agent, nil
	}
	d.stats.refused.Add(1)
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

// tokensFor returns the product tokens tg is decided for: the crawler's
// own, or, when Options names none, the product token of the request's
// own User-Agent (as Scrapy does), appended to buf.
func (d *decider) tokensFor(tg *target, buf []string) []string {
	if len(d.tokens) > 0 {
		return d.tokens
	}
	if tok := policy.ProductToken(tg.header.Get("User-Agent")); tok != "" {
		return append(buf, tok)
	}
	return nil
}

// agentAt returns what tokens are held to under st at now: the groups of
// the rules in force (none when every request is allowed), or refuse when
// every request is refused.
func agentAt(st *state, now time.Time, fallbackAfter time.Duration, tokens []string) (agent policy.Agent, refuse bool) {
	rules, refuse, _ := st.rules(now, fallbackAfter)
	return rules.Agent(tokens...), refuse
}

// primaryToken is the most specific of tokens, or "*" without one.
func primaryToken(tokens []string) string {
	if len(tokens) > 0 {
		return tokens[0]
	}
	return "*"
}
