package policy

import (
	"time"

	"github.com/crawlkit/robots/match"
)

// Agent is what one crawler is held to by a robots.txt file: the merged
// groups chosen for its product tokens. Choosing them costs a lookup, so a
// crawler deciding many paths of one site gets its Agent once and asks it.
// The zero Agent, like the Agent of a nil *Robots, has no groups and
// allows everything. An Agent is immutable and safe for concurrent use.
type Agent struct {
	sel   *selection
	token string
}

// Agent returns the groups that apply to a crawler presenting tokens, most
// specific first (such as "Googlebot-Image", "Googlebot"): those of the
// first token that some group names, case-insensitively and exactly, else
// the "*" groups (RFC 9309 section 2.2.1). r may be nil.
func (r *Robots) Agent(tokens ...string) Agent {
	sel, token := r.lookup(tokens)
	return Agent{sel: sel, token: token}
}

// Token returns the product token whose groups apply, "*" when the
// fallback groups do, and "" when no group does.
func (a Agent) Token() string { return a.token }

// Groups returns the indexes into Robots.Groups of the groups that apply.
func (a Agent) Groups() []int {
	if a.sel == nil {
		return nil
	}
	return a.sel.groups
}

// Allowed reports whether pathAndQuery may be fetched. It does not
// allocate for a path of up to 2,048 bytes that normalisation does not
// lengthen, as with printable ASCII without "*", "$" or a "%" that starts
// no escape (see match.AppendPath).
func (a Agent) Allowed(pathAndQuery string) bool {
	if a.sel == nil {
		return true
	}
	// The stack buffer is cleared on every call, so short paths, the
	// common case, get a small one.
	if len(pathAndQuery) <= smallPath {
		var buf [smallPath]byte
		return a.allowed(match.AppendPath(buf[:0], pathAndQuery))
	}
	var buf [2048]byte
	return a.allowed(match.AppendPath(buf[:0], pathAndQuery))
}

// smallPath is the size of the stack buffer for paths no longer than it.
const smallPath = 256

func (a Agent) allowed(path []byte) bool {
	if string(path) == "/robots.txt" {
		return true
	}
	x := a.sel.index()
	i := x.set.Lookup(path)
	return i < 0 || x.rules[i].Allow
}

// Decide decides pathAndQuery and explains the decision: the longest
// matching pattern decides, an Allow winning a tie; with no match the path
// is allowed (RFC 9309 section 2.2.2), and /robots.txt is always allowed.
func (a Agent) Decide(pathAndQuery string) Decision {
	if len(pathAndQuery) <= smallPath {
		var buf [smallPath]byte
		return a.decide(match.AppendPath(buf[:0], pathAndQuery), pathAndQuery)
	}
	var buf [2048]byte
	return a.decide(match.AppendPath(buf[:0], pathAndQuery), pathAndQuery)
}

// decide decides the normalised path of pathAndQuery.
func (a Agent) decide(path []byte, pathAndQuery string) Decision {
	d := Decision{Allowed: true, Path: pathAndQuery}
	if string(path) != pathAndQuery {
		// Most paths need no normalising; only the others cost a copy.
		d.Path = string(path)
	}
	if a.sel == nil {
		return d
	}
	d.Token, d.Groups = a.token, a.sel.groups
	if d.Path == "/robots.txt" {
		return d
	}
	x := a.sel.index()
	if i := x.set.Lookup(path); i >= 0 {
		d.Matched, d.Rule, d.Allowed = true, x.rules[i], x.rules[i].Allow
	}
	return d
}

// DecideRequest decides a request-URI as a server would see it. It is
// Decide, and when the request-URI is allowed but its path has dot
// segments ("/public/../private", "%2E" counting as "."), the path with
// them resolved is decided too, and refuses if it is refused: servers
// resolve dot segments, so an encoding trick must not reach a disallowed
// resource. Decision.Resolved says when the resolved path decided.
func (a Agent) DecideRequest(requestURI string) Decision {
	d := a.Decide(requestURI)
	if !d.Allowed {
		return d
	}
	if resolved, ok := ResolveDots(requestURI); ok {
		if dr := a.Decide(resolved); !dr.Allowed {
			dr.Resolved = resolved
			return dr
		}
	}
	return d
}

// AllowedRequest reports whether DecideRequest would allow requestURI,
// without building the explanation.
func (a Agent) AllowedRequest(requestURI string) bool {
	if !a.Allowed(requestURI) {
		return false
	}
	resolved, ok := ResolveDots(requestURI)
	return !ok || a.Allowed(resolved)
}

// CrawlDelay returns the largest Crawl-delay of the groups that apply, and
// whether any of them has one. Crawl-delay is not part of RFC 9309; it is
// meant only for pacing.
func (a Agent) CrawlDelay() (time.Duration, bool) {
	if a.sel == nil {
		return 0, false
	}
	return a.sel.delay, a.sel.hasDelay
}
