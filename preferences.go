package robots

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crawlkit/robots/policy"
)

// The AI usage preferences of a site, as a transport reads and, when the
// crawler declares its purposes, enforces them: a robots.txt file's
// Content-Usage and Content-Signal lines (see policy.Preferences) and a
// response's Content-Usage header. The exported face, Transport.Preferences
// and Transport.ResponsePreferences, is in transport.go.

// robotsPreferences returns the robots.txt preferences for tg under its
// origin's current state.
func (t *Transport) robotsPreferences(ctx context.Context, tg *wireTarget) (policy.Preferences, error) {
	_, st, now, err := t.robotsState(ctx, tg)
	if err != nil {
		return policy.Preferences{}, err
	}
	var own [1]string
	// Refused for an unreachable robots.txt, the agent holds no groups,
	// so every preference is unknown.
	agent, _ := st.agent(now, t.cfg.fallbackAfter, t.decider.tokensFor(tg, own[:0]))
	return agent.Preferences(tg.uri), nil
}

// ByPreference reports whether the site's AI usage preferences refused
// the URL (Options.Purposes) rather than a robots.txt rule or an
// unreachable robots.txt.
func (e *DisallowedError) ByPreference() bool { return e.Preference != nil }

// preferenceDetail is the part of Error for a refusal by preference:
// ": train-ai=n by Content-Usage: train-ai=n (line 4)".
func (e *DisallowedError) preferenceDetail() string {
	return ": " + e.Label + "=n by " + e.Preference.String()
}

// ErrUnknownPurpose is what every request, Check, Preferences and
// ResponsePreferences of a transport return, wrapped, when
// Options.Purposes names a purpose that no label stands for: a purpose
// the transport cannot enforce is a configuration error, never a silent
// no-op.
var ErrUnknownPurpose = errors.New("robots: unknown purpose in Options.Purposes")

// normalPurposes returns the declared purposes as the labels they stand
// for (see policy.LabelOf: any letter case, Content-Signal's keys as
// aliases), without empty or repeated ones, or an error naming the first
// purpose that stands for none, with the labels known.
func normalPurposes(purposes []string) ([]string, error) {
	var out []string
	for _, p := range purposes {
		if strings.TrimSpace(p) == "" {
			continue
		}
		label, ok := policy.LabelOf(p)
		if !ok {
			return nil, fmt.Errorf("%w: %q; the known labels are %s, and Content-Signal's ai-train for train-ai, in any letter case",
				ErrUnknownPurpose, p, strings.Join(policy.Labels(), ", "))
		}
		if !slices.Contains(out, label) {
			out = append(out, label)
		}
	}
	return out, nil
}
