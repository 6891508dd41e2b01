package policy

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crawlkit/robots/internal/norm"
	"github.com/crawlkit/robots/match"
)

// This file holds the parser's findings that come with a fix: the
// misspelt field, the rule outside any group, the invalid pattern, the
// relative sitemap. Each says what crawlers make of the line and, where
// one is obvious, how to write it instead.

// typoFields are the fields a misspelt name is compared against, with
// their spelling in the file's usual case.
var typoFields = [...]struct{ name, spelling string }{
	{"user-agent", "User-agent"},
	{"disallow", "Disallow"},
	{"allow", "Allow"},
	{"sitemap", "Sitemap"},
	{"crawl-delay", "Crawl-delay"},
	{"content-usage", "Content-Usage"},
	{"content-signal", "Content-Signal"},
}

// notDefined reports a field some crawlers read that RFC 9309 does not
// define, with what to use instead where that is known.
func (p *parser) notDefined(n int, key string) {
	if norm.EqualFold(key, "noindex") {
		// Google stopped reading it in 2019; others never did.
		p.warn(n, "%s is not part of RFC 9309; ignored: no major crawler reads it, so mark pages with a noindex robots meta tag or X-Robots-Tag header instead", key)
		return
	}
	// Without fmt: a file can hold thousands of Host or Clean-param lines.
	p.r.warnings = append(p.r.warnings, Warning{Line: n, Message: key + " is not part of RFC 9309; ignored"})
}

// nearField returns the spelling of the field that key, a name no
// crawler reads, is probably a misspelling of: one within a small edit
// distance (a letter wrong, missing, extra, or two swapped; two such
// edits for names of more than five letters).
func nearField(key string) (spelling string, ok bool) {
	if len(key) > 16 {
		return "", false
	}
	var buf [16]byte
	k := norm.AppendLower(buf[:0], key)
	for i, c := range k {
		if c == '_' || c == ' ' {
			k[i] = '-'
		}
	}
	best, bestDist := "", 3
	for _, f := range typoFields {
		limit := 2
		if len(f.name) <= 5 {
			limit = 1
		}
		if d := editDistance(string(k), f.name, limit); d <= limit && d < bestDist {
			best, bestDist = f.spelling, d
		}
	}
	return best, best != ""
}

// editDistance returns the optimal string alignment distance between a
// and b (insertions, deletions, substitutions and swaps of neighbours),
// or limit+1 when it is more than limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	// Three rows suffice: a swap looks two rows back.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unknownField reports a field that no crawler reads, or, without colon,
// a line of two words that no crawler reads. A near miss of a known field
// is an error that says what the line was probably meant to be and what
// ignoring it does to the file; anything else is a warning.
func (p *parser) unknownField(n int, key, value string, colon bool) {
	spelling, ok := nearField(key)
	switch {
	case colon && (norm.EqualFold(key, "http") || norm.EqualFold(key, "https")) && strings.HasPrefix(value, "//"):
		// A URL alone on a line splits at its scheme's colon.
		p.warn(n, "a URL alone is no robots.txt line; ignored: if it is a sitemap, write %q", "Sitemap: "+key+":"+value)
		return
	case !ok && colon:
		p.warn(n, "unknown field %q; ignored", key)
		return
	case !ok:
		p.warn(n, "no colon: not a robots.txt line; ignored")
		return
	}
	var consequence string
	switch spelling {
	case "User-agent":
		p.typoAgent = n
		switch {
		case p.cur < 0:
			consequence = "no group starts here and the rules below it, up to the next User-agent line, belong to none"
		case p.inRules:
			consequence = fmt.Sprintf("no group starts here and the rules below it join the group of line %d (%s)",
				p.groups[p.cur].line, p.groupAgents())
		default:
			consequence = fmt.Sprintf("the group of line %d does not name %q", p.groups[p.cur].line, value)
		}
	case "Allow", "Disallow":
		consequence = fmt.Sprintf("the rule %s: %s does not apply", spelling, value)
		if value != "" {
			p.finding(n, value)
		}
	case "Sitemap":
		consequence = "the sitemap is not read"
	case "Crawl-delay":
		consequence = "no Crawl-delay applies"
	case "Content-Usage", "Content-Signal":
		consequence = "the AI use preferences it states do not apply"
	}
	fix := spelling
	if !colon {
		fix += ": " + value
	}
	p.fault(n, "%q is probably %s misspelt: crawlers ignore the line, so %s; write %s", key, spelling, consequence, fix)
}

// maxListed is how many of a group's agents a message names.
const maxListed = 3

// groupAgents names the agents of the group being built, for a message:
// "User-agent: a, b".
func (p *parser) groupAgents() string {
	start := 0
	if p.cur > 0 {
		start = int(p.groups[p.cur-1].agentsEnd)
	}
	return listAgents(p.agents[start:])
}

// listAgents names agents for a message, the first maxListed of them:
// "User-agent: a, b, c and 2 more".
func listAgents(agents []string) string {
	more := ""
	if len(agents) > maxListed {
		agents, more = agents[:maxListed], fmt.Sprintf(" and %d more", len(agents)-maxListed)
	}
	return "User-agent: " + strings.Join(agents, ", ") + more
}

// stray reports a rule before any User-agent line. Crawlers ignore it,
// which is never what its author meant: it says which group it would have
// joined when a misspelt User-agent line is the cause, and how to give it
// a group otherwise.
func (p *parser) stray(n int, kind string) {
	if p.typoAgent > 0 {
		p.fault(n, "%s before any User-agent line; ignored: it would join the group of line %d if that line were spelt User-agent",
			kind, p.typoAgent)
		return
	}
	p.strays = append(p.strays, len(p.r.warnings))
	p.fault(n, "%s before any User-agent line; ignored: put a User-agent line above it (User-agent: * for every crawler)", kind)
}

// placeStrays adds to each stray rule's warning the group it would join
// if moved down, the first of the file, once the file is read.
func (p *parser) placeStrays() {
	if len(p.strays) > 0 && len(p.groups) > 0 {
		end := int(p.groups[0].agentsEnd)
		if p.cur == 0 {
			end = len(p.agents) // the first group is the one still open
		}
		where := fmt.Sprintf(", or move it into the group of line %d (%s)", p.groups[0].line, listAgents(p.agents[:end]))
		for _, i := range p.strays {
			p.r.warnings[i].Message += where
		}
	}
	if cap(p.strays) > maxPooled {
		p.strays = nil // not held by the parser pool
	}
}

// badPattern reports a pattern that match.Compile refuses (err), with the
// pattern that would be read instead when one is obvious.
func (p *parser) badPattern(n int, kind, value string, err error) {
	var why string
	switch {
	case errors.Is(err, match.ErrInvalidEscape):
		why = "has a % not followed by two hex digits"
	case errors.Is(err, match.ErrSpace):
		why = "contains a space"
	default:
		why = `starts with neither "/" nor "*"`
	}
	// Built without fmt, in one allocation: a real file can hold
	// thousands of these lines, and the message is the part of parsing
	// them that costs.
	p.finding(n, value)
	fix, ok := fixPattern(value)
	var msg strings.Builder
	msg.Grow(len(kind) + len(value) + len(why) + len(fix) + len(" pattern  ; ignored: write ") + 4)
	msg.WriteString(kind)
	msg.WriteString(" pattern ")
	writeQuoted(&msg, value)
	msg.WriteString(" ")
	msg.WriteString(why)
	msg.WriteString("; ignored")
	if ok {
		msg.WriteString(": write ")
		writeQuoted(&msg, fix)
	}
	p.r.warnings = append(p.r.warnings, Warning{Line: n, Message: msg.String(), Severity: SeverityError})
}

// quoted is strconv.Quote(s), told without its rune-by-rune scan for the
// usual printable ASCII text.
func quoted(s string) string {
	if plainText(s) {
		return `"` + s + `"`
	}
	return strconv.Quote(s)
}

// writeQuoted writes quoted(s) to b.
func writeQuoted(b *strings.Builder, s string) {
	if !plainText(s) {
		b.WriteString(strconv.Quote(s))
		return
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// plainText reports whether s is printable ASCII without a quote or a
// backslash, which strconv.Quote only encloses.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// finding keeps value as the pattern of line n's finding, for Concerns,
// in place of one the line had; finish copies it out of the caller's
// bytes.
func (p *parser) finding(n int, value string) {
	if k := len(p.found); k > 0 && p.found[k-1].line == n {
		p.found[k-1].pattern = value
		return
	}
	p.found = append(p.found, foundPattern{line: n, pattern: value})
}

// foundPattern is the pattern of the rule on line a warning is about;
// written, one matched as written (a Content-Usage path), not read as
// its author meant.
type foundPattern struct {
	line    int
	pattern string
	written bool
}

// Concerns reports whether w, one of r's warnings, can concern a request
// for path (normalised, as Agent.Decide reports it): a finding on a
// rule's pattern concerns only the paths that the pattern, read as its
// author meant (the fix the finding gives), matches, wildcards and all;
// any other finding concerns every path its lines' groups decide. A
// file's report of one URL lists only the findings that concern it.
func (r *Robots) Concerns(w Warning, path string) bool {
	i, ok := slices.BinarySearchFunc(r.findings, w.Line, func(f foundPattern, line int) int { return cmp.Compare(f.line, line) })
	if !ok {
		return true
	}
	f := r.findings[i]
	if f.written {
		p, err := match.Compile(f.pattern)
		return err != nil || p.Match([]byte(path))
	}
	meant, _ := decodeEntities(f.pattern)
	p, err := match.Compile(meant)
	if err != nil {
		if meant, ok = fixPattern(meant); !ok {
			return true
		}
		if p, err = match.Compile(meant); err != nil {
			return true
		}
	}
	return p.Match([]byte(path))
}

// entityInPattern reports a pattern that holds an HTML character
// reference ("&amp;" where a page's markup was copied): crawlers match
// it as those characters, so the URL its author meant is not matched.
// The fix is the pattern with every reference decoded.
func (p *parser) entityInPattern(n int, kind, value string) {
	decoded, ref := decodeEntities(value)
	if ref == "" {
		return
	}
	p.finding(n, value)
	fix := decoded
	if _, err := match.Compile(fix); err != nil {
		if fix, _ = fixPattern(decoded); fix == "" {
			fix = decoded
		}
	}
	p.r.warnings = append(p.r.warnings, Warning{Line: n, Severity: SeverityError,
		Message: kind + " pattern " + quoted(value) + " holds the HTML entity " + quoted(ref) + ", which crawlers match as written, not as the character it stands for: write " + quoted(fix)})
}

// cutEntity reports a numeric HTML character reference ("&#38;") in
// line n, text, whose "#" at hash starts a comment: crawlers read the
// line only up to the "&". The fix decodes it, and every reference
// after it, to the end of the line.
func (p *parser) cutEntity(n int, text string, hash int) {
	if _, _, ok := entityAt(text[hash-1:]); !ok {
		return
	}
	decoded, ref := decodeEntities(text[hash-1:])
	p.r.warnings = append(p.r.warnings, Warning{Line: n, Severity: SeverityError,
		Message: "the \"#\" of the HTML entity " + quoted(ref) + " starts a comment, so crawlers read only " + quoted(trim(text[:hash])) + ": write " + quoted(trim(text[:hash-1]+decoded))})
}

// decodeEntities returns s with every HTML character reference
// replaced by the text it stands for, and the first reference found
// ("" for none). Only the references markup pasted into a robots.txt
// holds are read, each with its semicolon: &amp; &lt; &gt; &quot;
// &apos; and numeric ones (&#38; &#x26;) of a character other than NUL,
// which reach a value only as a comment cuts them (cutEntity).
func decodeEntities(s string) (decoded, first string) {
	decoded, first = decodeOnce(s)
	// Markup escaped twice ("&amp;amp;") stands for the character all
	// the same: a fix never keeps a reference.
	for ref := first; ref != ""; {
		decoded, ref = decodeOnce(decoded)
	}
	return decoded, first
}

// decodeOnce is decodeEntities for the references s holds as written,
// not those their decoding makes.
func decodeOnce(s string) (decoded, first string) {
	var b strings.Builder
	last := 0
	for i := strings.IndexByte(s, '&'); i >= 0; {
		ref, text, ok := entityAt(s[i:])
		if ok {
			if first == "" {
				first = ref
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(text)
			last = i + len(ref)
		}
		next := strings.IndexByte(s[i+1:], '&')
		if next < 0 {
			break
		}
		// A reference holds no "&" after its first octet.
		i += 1 + next
	}
	if first == "" {
		return s, ""
	}
	b.WriteString(s[last:])
	return b.String(), first
}

// entityAt returns the character reference s starts with, and the text
// it stands for.
func entityAt(s string) (ref, text string, ok bool) {
	if len(s) < 4 || s[0] != '&' {
		return "", "", false
	}
	if s[1] != '#' {
		// Most "&"s of a pattern start a query parameter: its first
		// letter rules out all but one or two references.
		switch c := s[1] | 0x20; c {
		case 'a', 'l', 'g', 'q':
			for _, e := range [...]struct{ ref, text string }{
				{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", `"`}, {"&apos;", "'"},
			} {
				if e.ref[1] == c && len(s) >= len(e.ref) && norm.EqualFold(s[:len(e.ref)], e.ref) {
					return s[:len(e.ref)], e.text, true
				}
			}
		}
		return "", "", false
	}
	digits, base, maxDigits := s[2:], 10, 7
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base, maxDigits = digits[1:], 16, 6
	}
	end := strings.IndexByte(digits, ';')
	if end <= 0 || end > maxDigits {
		return "", "", false
	}
	c, err := strconv.ParseUint(digits[:end], base, 32)
	if err != nil || c == 0 || c > utf8.MaxRune || 0xD800 <= c && c <= 0xDFFF || digits[0] == '+' {
		return "", "", false
	}
	return s[:len(s)-len(digits)+end+1], string(rune(c)), true
}

// fixPattern returns the pattern that value, refused by match.Compile,
// was most likely meant to be: HTML entities decoded, spaces written %20,
// a stray % written %25, a full URL cut to its path, and a leading "/"
// where it has none.
func fixPattern(value string) (string, bool) {
	value, _ = decodeEntities(value)
	var b strings.Builder
	b.Grow(len(value) + 8)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case c == ' ':
			b.WriteString("%20")
		case c == '%' && !(i+2 < len(value) && isHex(value[i+1]) && isHex(value[i+2])):
			b.WriteString("%25")
		default:
			b.WriteByte(c)
		}
	}
	fix := b.String()
	if fix[0] != '/' && fix[0] != '*' {
		fix = pathOf(fix)
	}
	if _, err := match.Compile(fix); err != nil {
		return "", false
	}
	return fix, true
}

// pathOf returns the path and query of fix when it is an absolute http or
// https URL, else fix made to start with a slash.
func pathOf(fix string) string {
	if !absoluteURL(fix) {
		return "/" + fix
	}
	u, err := url.Parse(fix)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "/" + fix
	}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if path == "" {
		path = "/"
	}
	return path
}

// absoluteURL reports whether s opens as an absolute URL with a host (a
// scheme, "://" and a host octet), as nearly every Sitemap line does: the
// common case is told without url.Parse and its allocations.
func absoluteURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 || i+3 >= len(s) || s[i+3] == '/' {
		return false
	}
	for j := range i {
		c := s[j]
		letter := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// sitemap records a Sitemap line. The sitemaps protocol wants a full URL;
// a relative one is kept, as the transport resolves it against the
// robots.txt URL, but with a warning, since other crawlers drop it.
func (p *parser) sitemap(n int, value string) {
	meant := value
	if strings.IndexByte(value, '&') >= 0 {
		var ref string
		if meant, ref = decodeEntities(value); ref != "" {
			p.r.warnings = append(p.r.warnings, Warning{Line: n, Severity: SeverityWarning,
				Message: "Sitemap " + quoted(value) + " holds the HTML entity " + quoted(ref) + ", which crawlers fetch as written: write " + quoted(meant)})
		}
	}
	if absoluteURL(value) {
		p.r.sitemaps = append(p.r.sitemaps, value)
		return
	}
	if u, err := url.Parse(value); err != nil || u.Scheme == "" || u.Host == "" {
		example := "https://example.com/sitemap.xml"
		if err == nil && strings.HasPrefix(value, "/") && !strings.HasPrefix(value, "//") {
			example = "https://example.com" + meant
		}
		p.warn(n, "Sitemap %q is relative; crawlers such as Google's ignore it: write it as an absolute URL, such as %q", value, example)
	}
	p.r.sitemaps = append(p.r.sitemaps, value)
}
