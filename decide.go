package robots

import (
	"log/slog"
	"net/url"
	"time"

	"github.com/crawlkit/robots/policy"
)

// decide returns the *DisallowedError refusing u, whose target is tg, for
// tokens under st at now, or nil with the groups that allowed it. Every
// form of the request-URI that a server may serve must be allowed: as
// sent, with dot segments resolved, and with repeated slashes merged
// first.
func (t *Transport) decide(st *state, u *url.URL, tg *target, tokens []string, now time.Time) (policy.Agent, error) {
	agent, refuse := agentAt(st, now, t.cfg.fallbackAfter, tokens)
	if refuse {
		e := &DisallowedError{URL: u.Redacted(), Token: primaryToken(tokens), Unreachable: true, RetryAt: st.rec.RetryAt, Err: st.err}
		return agent, t.refused(e)
	}
	// Agent.Allowed decides every form a server may serve for the
	// request-URI: as sent, dot segments resolved, and repeated slashes
	// merged first.
	if !agent.Allowed(tg.uri) {
		// Refused: only now is the explanation worth building.
		d := agent.Decide(tg.uri)
		token := d.Token
		if token == "" || token == "*" {
			token = primaryToken(tokens)
		}
		rule := d.Rule // a copy, so that d itself stays off the heap
		return agent, t.refused(&DisallowedError{URL: u.Redacted(), Token: token, Rule: &rule, Resolved: d.Resolved})
	}
	t.stats.allowed.Add(1)
	return agent, nil
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

// refused counts and logs a refusal and returns it.
func (t *Transport) refused(e *DisallowedError) error {
	t.stats.refused.Add(1)
	if e.Rule != nil {
		safeLog(t.cfg.logger, slog.LevelInfo, "robots: request refused", "url", e.URL, "token", e.Token, "rule", e.Rule.Directive(), "line", e.Rule.Line)
	} else {
		safeLog(t.cfg.logger, slog.LevelInfo, "robots: request refused", "url", e.URL, "token", e.Token, "reason", "robots.txt unreachable", "retryAt", e.RetryAt)
	}
	return e
}
