package policy

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/crawlkit/robots/match"
)

// MaxSize is the number of bytes of a robots.txt file that crawlers must
// read at least (RFC 9309 section 2.5); content past it is ignored.
const MaxSize = 500 << 10

// Truncate cuts data to at most limit bytes, dropping a partial last line
// so that no rule is read half-written. It returns data unchanged when it
// is within the limit.
func Truncate(data []byte, limit int) []byte {
	if len(data) <= limit {
		return data
	}
	data = data[:limit]
	if i := bytes.LastIndexAny(data, "\r\n"); i >= 0 {
		return data[:i+1]
	}
	return data[:0]
}

// fieldNames maps every field name the parser accepts, lower-cased, to the
// field it means. Misspellings that sites use are read as meant, with a
// warning, as Google's parser does.
var fieldNames = map[string]string{
	"user-agent":  "user-agent",
	"useragent":   "user-agent",
	"user agent":  "user-agent",
	"user_agent":  "user-agent",
	"user-agents": "user-agent",
	"allow":       "allow",
	"disallow":    "disallow",
	"dissallow":   "disallow",
	"dissalow":    "disallow",
	"disalow":     "disallow",
	"diasllow":    "disallow",
	"disallaw":    "disallow",
	"disallows":   "disallow",
	"sitemap":     "sitemap",
	"site-map":    "sitemap",
	"crawl-delay": "crawl-delay",
	"crawldelay":  "crawl-delay",
	"crawl_delay": "crawl-delay",
}

// knownOther are fields some crawlers honour that RFC 9309 does not define.
var knownOther = map[string]bool{
	"host": true, "noindex": true, "clean-param": true, "request-rate": true,
	"visit-time": true, "nofollow": true, "content-signal": true,
}

// parser holds the state of one Parse call.
type parser struct {
	r       *Robots
	cur     int  // index of the group being built, -1 before any
	inRules bool // the current group has had a rule, so a User-agent starts a new one

	ruleLines []int       // per group, its Allow and Disallow lines, empty and invalid ones included
	empties   []emptyRule // the empty Allow and Disallow lines, judged once each group is complete
}

// emptyRule is an "Allow:" or "Disallow:" line with no pattern.
type emptyRule struct {
	line, group int
	allow       bool
}

// Parse reads a robots.txt file. It never fails: lines it cannot use are
// skipped with a Warning, so garbage gives an empty policy and warnings.
// Parse reads all of data; apply Truncate first to see what a crawler sees.
func Parse(data []byte) *Robots {
	p := parser{r: &Robots{}, cur: -1}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	line := 0
	for len(data) > 0 {
		line++
		end := bytes.IndexAny(data, "\r\n")
		var text []byte
		if end < 0 {
			text, data = data, nil
		} else {
			text = data[:end]
			if data[end] == '\r' && end+1 < len(data) && data[end+1] == '\n' {
				end++
			}
			data = data[end+1:]
		}
		p.line(line, text)
	}
	p.noteEmpties()
	p.r.lines = line
	p.r.index()
	return p.r
}

func (p *parser) warn(line int, format string, args ...any) {
	p.r.warnings = append(p.r.warnings, Warning{Line: line, Message: fmt.Sprintf(format, args...)})
}

func trim(b []byte) []byte { return bytes.Trim(b, " \t") }

func (p *parser) line(n int, text []byte) {
	if i := bytes.IndexByte(text, '#'); i >= 0 {
		text = text[:i]
	}
	text = trim(text)
	if len(text) == 0 {
		return
	}
	colon := bytes.IndexByte(text, ':')
	if colon < 0 {
		p.warn(n, "no colon: not a robots.txt line; ignored")
		p.extend(n, "")
		return
	}
	key := trim(text[:colon])
	var buf [16]byte
	// Used only as map keys and in comparisons, name costs no string copy.
	name := appendLower(buf[:0], key)
	field, ok := fieldNames[string(name)]
	switch {
	case !ok && knownOther[string(name)]:
		p.warn(n, "%s is not part of RFC 9309; ignored", key)
	case !ok:
		p.warn(n, "unknown field %q; ignored", key)
	case string(name) != field:
		p.warn(n, "%q read as %q", key, field)
	}
	value := trim(text[colon+1:])
	p.field(n, field, value)
	p.extend(n, field)
}

// extend makes line n the end of the current group's span. Every line of a
// group but the file-wide Sitemap belongs to it, ignored lines included, so
// that their warnings show with the group.
func (p *parser) extend(n int, field string) {
	if p.cur >= 0 && field != "sitemap" {
		p.r.groups[p.cur].EndLine = n
	}
}

func (p *parser) field(n int, field string, value []byte) {
	switch field {
	case "user-agent":
		p.agent(n, string(value))
	case "allow", "disallow":
		p.rule(n, field == "allow", string(value))
	case "sitemap":
		if len(value) == 0 {
			p.warn(n, "empty Sitemap; ignored")
			return
		}
		p.r.sitemaps = append(p.r.sitemaps, string(value))
	case "crawl-delay":
		p.crawlDelay(n, string(value))
	}
}

// appendLower appends b lower-cased (ASCII only) to dst.
func appendLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func (p *parser) agent(n int, value string) {
	if value == "" {
		p.warn(n, "empty User-agent; ignored")
		return
	}
	token := value
	if value != "*" {
		token = ProductToken(value)
		switch {
		case token == "":
			p.warn(n, "User-agent %q has no product token; ignored", value)
			return
		case token != value:
			p.warn(n, "User-agent %q read as its product token %q", value, token)
		}
	}
	if p.cur < 0 || p.inRules {
		p.r.groups = append(p.r.groups, Group{Line: n})
		p.ruleLines = append(p.ruleLines, 0)
		p.cur = len(p.r.groups) - 1
		p.inRules = false
	}
	g := &p.r.groups[p.cur]
	g.Agents = append(g.Agents, token)
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

func (p *parser) rule(n int, allow bool, value string) {
	kind := "Disallow"
	if allow {
		kind = "Allow"
	}
	if p.cur < 0 {
		p.warn(n, "%s before any User-agent line; ignored", kind)
		return
	}
	g := &p.r.groups[p.cur]
	p.inRules = true
	p.ruleLines[p.cur]++
	if value == "" {
		p.empties = append(p.empties, emptyRule{line: n, group: p.cur, allow: allow})
		return
	}
	pat, err := match.Compile(value)
	if err != nil {
		var why string
		switch {
		case errors.Is(err, match.ErrInvalidEscape):
			why = "has a % not followed by two hex digits"
		case errors.Is(err, match.ErrSpace):
			why = "contains a space"
		default:
			why = `starts with neither "/" nor "*"`
		}
		p.warn(n, "%s pattern %q %s; ignored", kind, value, why)
		return
	}
	g.Rules = append(g.Rules, Rule{Allow: allow, Pattern: value, Line: n})
	g.compiled = append(g.compiled, match.Rule{Pattern: pat, Allow: allow})
}

// noteEmpties judges the empty rules once their groups are complete. An
// empty Disallow is valid (RFC 9309 section 2.2.2 allows an empty
// pattern): as its group's only rule it is the common way to allow
// everything, and is not worth a word. Beside other rules, and an empty
// Allow anywhere, it matches nothing, which is worth a Note. The notes
// join the warnings in line order.
func (p *parser) noteEmpties() {
	if len(p.empties) == 0 {
		return
	}
	for _, e := range p.empties {
		switch {
		case e.allow:
			p.r.warnings = append(p.r.warnings, Warning{Line: e.line, Note: true,
				Message: "empty Allow matches nothing; it has no effect"})
		case p.ruleLines[e.group] > 1:
			p.r.warnings = append(p.r.warnings, Warning{Line: e.line, Note: true,
				Message: "empty Disallow disallows nothing; the group's other rules decide"})
		}
	}
	slices.SortStableFunc(p.r.warnings, func(a, b Warning) int { return cmp.Compare(a.Line, b.Line) })
}

func (p *parser) crawlDelay(n int, value string) {
	if p.cur < 0 {
		p.warn(n, "Crawl-delay before any User-agent line; ignored")
		return
	}
	secs, err := strconv.ParseFloat(value, 64)
	if err != nil || !(secs >= 0 && secs <= 1e6) {
		p.warn(n, "Crawl-delay %q is not a number of seconds; ignored", value)
		return
	}
	// A Crawl-delay belongs to the group above it, like a rule, so a
	// User-agent after it starts a new group.
	p.inRules = true
	g := &p.r.groups[p.cur]
	g.CrawlDelay = time.Duration(secs * float64(time.Second))
	g.HasCrawlDelay = true
}
