package policy

import (
	"time"

	"github.com/crawlkit/robots/internal/target"
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
	owner *Robots // for the preferences of the whole file
}

// Agent returns the groups that apply to a crawler presenting tokens, most
// specific first (such as "Googlebot-Image", "Googlebot"): those of the
// first token that some group names, case-insensitively and exactly, else
// the "*" groups (RFC 9309 section 2.2.1). r may be nil.
func (r *Robots) Agent(tokens ...string) Agent {
	sel, token := r.lookup(tokens)
	return Agent{sel: sel, token: token, owner: r}
}

// ProductToken returns the product token that leads a User-Agent string:
// "ExampleBot" for "ExampleBot/1.0 (+https://example.com/bot)". RFC 9309
// section 2.2.1 allows letters, "-" and "_" in a token; digits are
// accepted too, since real crawler names ("MJ12bot", "360Spider") have
// them. It returns "" when s does not start with a token character.
func ProductToken(s string) string {
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return s[:i]
		}
	}
	return s
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
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

// Allowed reports whether a request for pathAndQuery may be sent, as the
// transport decides it: the path as sent, and the forms that servers
// serve for it, must all be allowed. Those forms are the path with its dot
// segments resolved ("/public/../private", "%2E" counting as "."), with
// its repeated slashes merged and then its dot segments resolved
// ("//private"), and, when reading "%2F" as "/" reveals a dot segment,
// the path a server that decodes "%2F" first would serve
// ("/public/..%2fprivate" is "/private"), so that no spelling reaches a
// refused resource. "%2F" is otherwise not "/": "/a%2Fb" is not decided
// as "/a/b". See AllowedLiteral for the path alone.
//
// Allowed does not allocate for a path of up to 2,048 bytes that has no
// such forms and that normalisation does not lengthen, as with printable
// ASCII without "*", "$" or a "%" that starts no escape (see
// match.AppendPath).
func (a Agent) Allowed(pathAndQuery string) bool {
	sel := a.sel
	if sel == nil || sel.allowsAll {
		return true
	}
	if !sel.allowsLiteral(pathAndQuery) {
		return false
	}
	// Almost every path has no other form: nothing more to decide.
	resolved, merged, decoded := target.Alternates(pathAndQuery)
	return resolved == "" && merged == "" && decoded == "" || a.allowedIn(resolved, merged, decoded)
}

// alternates returns the forms other than itself that a server may serve
// pathAndQuery as (target.Alternates: dot segments resolved, slashes
// merged, %2F decoded where that reveals a dot segment), "" for each it
// does not have.
func alternates(pathAndQuery string) [3]string {
	resolved, merged, decoded := target.Alternates(pathAndQuery)
	return [3]string{resolved, merged, decoded}
}

// allowedIn reports whether each of the forms target.Alternates gives is
// allowed, or absent.
func (a Agent) allowedIn(resolved, merged, decoded string) bool {
	return (resolved == "" || a.AllowedLiteral(resolved)) && (merged == "" || a.AllowedLiteral(merged)) &&
		(decoded == "" || a.AllowedLiteral(decoded))
}

// AllowedLiteral reports whether pathAndQuery itself is allowed, read
// literally: the forms a server may resolve it to are not decided, so
// "/public/../private" may be allowed where Allowed refuses it.
func (a Agent) AllowedLiteral(pathAndQuery string) bool {
	if a.sel == nil || a.sel.allowsAll {
		return true
	}
	return a.sel.allowsLiteral(pathAndQuery)
}

// allowsLiteral is AllowedLiteral for a selection that has rules. It is a
// method of the selection rather than of the Agent, so that only one word
// of the Agent is kept across the normalisation.
func (s *selection) allowsLiteral(pathAndQuery string) bool {
	// The stack buffer is cleared on every call, so short paths, the
	// common case, get a small one, large enough for every octet to be
	// escaped (three octets each).
	switch {
	case len(pathAndQuery) <= shortPath/3:
		var buf [shortPath]byte
		return s.allows(match.AppendPath(buf[:0], pathAndQuery))
	case len(pathAndQuery) <= smallPath:
		var buf [smallPath]byte
		return s.allows(match.AppendPath(buf[:0], pathAndQuery))
	}
	var buf [2048]byte
	return s.allows(match.AppendPath(buf[:0], pathAndQuery))
}

// shortPath and smallPath are the sizes of the stack buffers for paths
// of up to a third of shortPath, and up to smallPath.
const (
	shortPath = 128
	smallPath = 256
)

// allows reports whether s allows the normalised path.
func (s *selection) allows(path []byte) bool {
	if target.IsRobotsPath(path) {
		return true
	}
	i := s.decide(path)
	return i < 0 || s.owner.rules[i].line&ruleAllow != 0
}

// Decide decides a request for pathAndQuery as Allowed does and explains
// the decision. For each form decided, the longest matching pattern
// decides, an Allow winning a tie; with no match the path is allowed (RFC
// 9309 section 2.2.2), and /robots.txt is always allowed, whatever its
// query. When the path as sent is allowed but another form is refused,
// the Decision is that form's, with Decision.Resolved set.
func (a Agent) Decide(pathAndQuery string) Decision {
	d := a.DecideLiteral(pathAndQuery)
	if !d.Allowed || a.sel == nil {
		return d
	}
	for _, form := range alternates(pathAndQuery) {
		if form == "" {
			continue
		}
		if df := a.DecideLiteral(form); !df.Allowed {
			df.Resolved = form
			return df
		}
	}
	return d
}

// DecideLiteral decides pathAndQuery itself, read literally, as
// AllowedLiteral does, and explains the decision.
func (a Agent) DecideLiteral(pathAndQuery string) Decision {
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
	if target.IsRobotsPath(path) {
		d.robotsTxt = true
		return d
	}
	if a.sel == nil {
		return d
	}
	d.Token, d.Groups = a.token, a.sel.groups
	if i := a.sel.decide(path); i >= 0 {
		d.Matched, d.Rule = true, a.sel.owner.rule(i)
		d.Allowed = d.Rule.Allow
	}
	return d
}

// CrawlDelay returns the largest Crawl-delay of the groups that apply, and
// whether any of them has one. Crawl-delay is not part of RFC 9309; it is
// meant only for pacing.
func (a Agent) CrawlDelay() (time.Duration, bool) {
	if a.sel == nil {
		return 0, false
	}
	return max(a.sel.delay, 0), a.sel.delay >= 0
}
