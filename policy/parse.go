package policy

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/crawlkit/robots/internal/norm"
	"github.com/crawlkit/robots/match"
)

// MaxSize is the number of bytes of a robots.txt file that crawlers must
// read at least (RFC 9309 section 2.5); content past it is ignored.
const MaxSize = 500 << 10

// Truncate cuts data to at most limit bytes, dropping a partial last line
// so that no rule is read half-written; a line whole within the limit,
// its line end just past it, is kept. It returns data unchanged when it
// is within the limit.
func Truncate(data []byte, limit int) []byte {
	if len(data) <= limit {
		return data
	}
	if c := data[limit]; c == '\n' || c == '\r' {
		return data[:limit]
	}
	data = data[:limit]
	return data[:bytes.LastIndexAny(data, "\n\r")+1]
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
	"visit-time": true, "nofollow": true,
}

// parser holds the state of one Parse call. Groups, their agents and
// their rules are gathered in scratch slices that are reused from call to
// call (parsers), and copied at the end into slices of exactly their
// size, so that a large file neither regrows a slice per group nor holds
// the spare capacity of one.
type parser struct {
	r       *Robots
	cur     int  // index of the group being built, -1 before any
	inRules bool // the current group has had a rule, so a User-agent starts a new one
	// disallows reports that the current group has a Disallow rule.
	disallows bool
	// typoAgent is the line of the last misspelt User-agent, or 0.
	typoAgent int
	// strays index the warnings of rules before any group that name no
	// misspelt User-agent; placeStrays names the first group in them.
	strays []int

	// The agents and rules of each group follow those of the groups
	// before it; closeGroup marks where they end.
	groups []group
	agents []string
	// rules are in their held form, their ends in patterns, which holds
	// the patterns of the rules read so far end to end: finish copies
	// both whole.
	rules    []rule
	patterns []byte
	// norms are the normalised patterns of the rules that normalising
	// changes, by rule; the others' are the patterns themselves.
	norms []normed
	// found are the patterns findings are about, in line order.
	found []foundPattern

	ruleLines []int       // per group, its Allow and Disallow lines, empty and invalid ones included
	empties   []emptyRule // the empty Allow and Disallow lines, judged once each group is complete
}

// emptyRule is an "Allow:" or "Disallow:" line with no pattern.
type emptyRule struct {
	line, group int
	allow       bool
}

// maxParse is the most bytes of a file that Parse reads, far more than any
// crawler reads (see MaxSize), so that a held file's offsets and line
// numbers fit in 32 bits (see rule).
const maxParse = math.MaxInt32

var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooled is the most rules or agents whose scratch space a pooled
// parser keeps: 256 KiB of rules, enough for all but the largest files a
// crawler reads (MaxSize), which then allocate their own.
const maxPooled = 1 << 15

// maxPooledPatterns is the most octets of patterns that a pooled parser
// keeps room for: those of any file a crawler reads (MaxSize) and of the
// largest real ones, so that parsing one does not cost the next parse
// its scratch space.
const maxPooledPatterns = 1 << 20

// smallRules is the most rules that Parse makes room for without
// counting lines: 64 KiB of scratch space, for files of up to 64 KiB.
const smallRules = 64 << 10 / minRuleLine

// minRuleLine is the length of the shortest line that holds a rule and
// its line end ("Allow:/", without the colon "allow /", and a LF): a file
// of n bytes holds at most n/minRuleLine+1 rules.
const minRuleLine = 8

// Parse reads a robots.txt file. It never fails: lines it cannot use are
// skipped with a Warning, so garbage gives an empty policy and warnings.
// Parse reads all of data up to 2 GiB; apply Truncate first to see what a
// crawler sees.
//
// Every string the result holds (agents, patterns, sitemaps, and the
// normalised form of the few patterns that normalising changes) is part
// of one string copied from data, so a parsed file costs about its size
// plus a few words per group and rule.
func Parse(data []byte) *Robots {
	p := parsers.Get().(*parser)
	p.r, p.cur, p.inRules, p.disallows = &Robots{}, -1, false, false
	p.ruleLines, p.empties = p.ruleLines[:0], p.empties[:0]
	p.typoAgent, p.strays = 0, p.strays[:0]
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	whole := len(data) <= maxParse
	if !whole {
		data = Truncate(data, maxParse)
	}
	// While parsing, the lines are read in place, through a string view of
	// data; finish copies every string that the result keeps (agents,
	// patterns, sitemaps) into one string of their own, so the result
	// never points into data.
	body := unsafe.String(unsafe.SliceData(data), len(data))
	if len(data) > cap(p.patterns) && len(data) <= maxPooledPatterns {
		// A file's patterns are at most the file; room for twice as much
		// as before keeps a new parser from growing it file by file.
		p.patterns = make([]byte, 0, min(max(len(data), 2*cap(p.patterns)), maxPooledPatterns))
	}
	if most := len(data)/minRuleLine + 1; most > cap(p.rules) {
		// Room for every rule the file can hold, rather than a list grown
		// again and again: a large file holds little else, and gets room
		// for a rule on every line, found in one pass.
		if most > smallRules {
			most = min(most, strings.Count(body, "\n")+strings.Count(body, "\r")+1)
		}
		if most > cap(p.rules) {
			p.rules = make([]rule, 0, most)
		}
	}
	// Most files have no CR: their lines need no search for one.
	hasCR := strings.IndexByte(body, '\r') >= 0
	line := 0
	lf := -1 // position of the next LF at or after pos, once searched for
	// hash is the position of the next "#" at or after pos, once searched
	// for: most lines have none, and most comments are at the top, so a
	// search per "#" rather than per line finds them.
	hash := -1
	for pos := 0; pos < len(body); {
		line++
		if lf < pos {
			if lf = strings.IndexByte(body[pos:], '\n'); lf < 0 {
				lf = len(body)
			} else {
				lf += pos
			}
		}
		text, next := body[pos:lf], lf+1
		// A CR ends a line too, alone or before an LF.
		if hasCR {
			if cr := strings.IndexByte(text, '\r'); cr >= 0 {
				text = text[:cr]
				if pos+cr+1 != lf {
					next = pos + cr + 1
				}
			}
		}
		if hash < pos {
			if hash = strings.IndexByte(body[pos:], '#'); hash < 0 {
				hash = len(body)
			} else {
				hash += pos
			}
		}
		if hash < pos+len(text) {
			if hash > pos && body[hash-1] == '&' {
				p.cutEntity(line, text, hash-pos)
			}
			text = text[:hash-pos]
		}
		pos = next
		p.line(line, text)
	}
	if !whole {
		// The line that does not fit counts, so that the warning has one.
		line++
		p.warn(line, "file longer than %d bytes; the rest is ignored", maxParse)
	}
	p.placeStrays()
	p.noteEmpties()
	r := p.finish()
	r.lines = line
	p.r = nil
	if cap(p.rules) <= maxPooled && cap(p.agents) <= maxPooled && cap(p.found) <= maxPooled && cap(p.patterns) <= maxPooledPatterns {
		// The scratch of a huge file is left to the collector rather than
		// held by the pool.
		parsers.Put(p)
	}
	return r
}

// finish moves the gathered groups into the Robots in their compact form
// (see group), in slices of exactly their size, and copies the strings it
// keeps, which point into the caller's data, into one string: comments,
// field names and blank lines are not kept.
func (p *parser) finish() *Robots {
	r := p.r
	n := len(p.patterns)
	for _, a := range p.agents {
		n += len(a)
	}
	for _, sm := range r.sitemaps {
		n += len(sm)
	}
	for _, x := range p.norms {
		n += len(x.norm)
	}
	for _, f := range p.found {
		n += len(f.pattern)
	}
	// One slice of exactly n octets, appended to without a Builder's
	// checks on every write, viewed as the one string of the result.
	kept := append(make([]byte, 0, n), p.patterns...)
	if len(p.rules) > 0 {
		r.rules = slices.Clone(p.rules)
	}
	if len(p.agents) > 0 {
		r.agentEnds = make([]uint32, len(p.agents))
		for k, a := range p.agents {
			kept = append(kept, a...)
			r.agentEnds[k] = uint32(len(kept))
		}
	}
	off := len(kept)
	for _, sm := range r.sitemaps {
		kept = append(kept, sm...)
	}
	for _, x := range p.norms {
		kept = append(kept, x.norm...)
	}
	for _, f := range p.found {
		kept = append(kept, f.pattern...)
	}
	// Nothing writes to kept after this.
	r.text = unsafe.String(unsafe.SliceData(kept), len(kept))
	for i, sm := range r.sitemaps {
		r.sitemaps[i], off = r.text[off:off+len(sm)], off+len(sm)
	}
	if len(p.norms) > 0 {
		r.norms = make([]normed, len(p.norms))
		for i, x := range p.norms {
			r.norms[i] = normed{rule: x.rule, norm: r.text[off : off+len(x.norm)]}
			off += len(x.norm)
		}
	}
	if len(p.found) > 0 {
		r.findings = make([]foundPattern, len(p.found))
		for i, f := range p.found {
			r.findings[i] = foundPattern{line: f.line, pattern: r.text[off : off+len(f.pattern)], written: f.written}
			off += len(f.pattern)
		}
	}
	// Appending left spare capacity that a held file need not keep.
	if cap(r.sitemaps) > len(r.sitemaps) {
		r.sitemaps = slices.Clone(r.sitemaps)
	}
	if cap(r.warnings) > len(r.warnings) {
		r.warnings = slices.Clone(r.warnings)
	}
	if len(p.groups) > 0 {
		p.closeGroup()
		r.groups = slices.Clone(p.groups)
	}
	clear(p.agents)
	clear(p.norms)
	clear(p.found)
	p.groups, p.agents, p.rules, p.norms, p.found = p.groups[:0], p.agents[:0], p.rules[:0], p.norms[:0], p.found[:0]
	p.patterns = p.patterns[:0]
	return r
}

// closeGroup marks where the agents and rules of the group being built
// end, at those read so far, and whether it has a Disallow.
func (p *parser) closeGroup() {
	if p.cur >= 0 {
		g := &p.groups[p.cur]
		g.agentsEnd, g.rulesEnd, g.disallows = uint32(len(p.agents)), uint32(len(p.rules)), p.disallows
	}
	p.disallows = false
}

// splitLine splits a trimmed, non-empty line into its field name and value
// at the first colon. Without a colon, a line of exactly two words
// separated by spaces or tabs splits between them, and ok is false: the
// caller reads it only when the first word is a field name. Any other
// line without a colon gives an empty key.
func splitLine(text string) (key, value string, ok bool) {
	// text is trimmed: the name has no space to its left, the value none
	// to its right.
	if colon := strings.IndexByte(text, ':'); colon >= 0 {
		return trimRight(text[:colon]), trimLeft(text[colon+1:]), true
	}
	sp := strings.IndexAny(text, " \t")
	if sp < 0 {
		return "", "", false
	}
	value = trimLeft(text[sp:])
	if strings.ContainsAny(value, " \t") {
		// Three words or more: too far from "field value" to guess.
		return "", "", false
	}
	return text[:sp], value, false
}

// warn records a warning on line; note and fault record the other two
// severities.
func (p *parser) warn(line int, format string, args ...any) {
	p.report(line, SeverityWarning, format, args...)
}

func (p *parser) note(line int, format string, args ...any) {
	p.report(line, SeverityNote, format, args...)
}

func (p *parser) fault(line int, format string, args ...any) {
	p.report(line, SeverityError, format, args...)
}

func (p *parser) report(line int, sev Severity, format string, args ...any) {
	p.r.warnings = append(p.r.warnings, Warning{Line: line, Message: fmt.Sprintf(format, args...), Severity: sev})
}

// trim removes ASCII spaces and tabs, the only white space RFC 9309
// allows around a value, from both ends of s; trimLeft and trimRight
// from one.
func trim(s string) string { return trimRight(trimLeft(s)) }

func trimLeft(s string) string {
	for len(s) > 0 && s[0] <= ' ' && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

func trimRight(s string) string {
	for len(s) > 0 && s[len(s)-1] <= ' ' && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// lookupField returns the field a field name means and whether it means
// one, and whether the name is the field's own, in any case. The five
// field names of nearly every line, then the two of AI usage preferences
// (preferences.go), are told by their length and compared without a map
// lookup.
func lookupField(key string) (field string, known, exact bool) {
	var f string
	switch len(key) {
	case len("allow"):
		f = "allow"
	case len("sitemap"):
		f = "sitemap"
	case len("disallow"):
		f = "disallow"
	case len("user-agent"):
		f = "user-agent"
	case len("crawl-delay"):
		f = "crawl-delay"
	case len("content-usage"):
		f = "content-usage"
	case len("content-signal"):
		f = "content-signal"
	}
	if f != "" && norm.EqualLower(key, f) {
		return f, true, true
	}
	if len(key) > 16 {
		return "", false, false
	}
	var buf [16]byte
	// Used only as map keys, name costs no string copy.
	name := norm.AppendLower(buf[:0], key)
	if knownOther[string(name)] {
		return "", false, true
	}
	field, known = fieldNames[string(name)]
	return field, known, false
}

// disallowWord is "disallow" as a word, to which a key of eight octets
// is compared folded (see norm.EqualLower).
var disallowWord = norm.Word("disallow")

// line reads line n, text, its comment cut off.
func (p *parser) line(n int, text string) {
	text = trim(text)
	if len(text) == 0 {
		return
	}
	// Nearly every line is a rule or a User-agent, spelt right, its colon
	// right after the name: told by its first octets, and read at once,
	// without the general path's search for the colon and lookups.
	switch {
	case len(text) > len("disallow") && text[len("disallow")] == ':' && norm.FoldedWord(text) == disallowWord:
		p.rule(n, false, trimLeft(text[len("disallow:"):]))
	case len(text) > len("allow") && text[len("allow")] == ':' && norm.EqualLower(text[:len("allow")], "allow"):
		p.rule(n, true, trimLeft(text[len("allow:"):]))
	case len(text) > len("user-agent") && text[len("user-agent")] == ':' && norm.EqualLower(text[:len("user-agent")], "user-agent"):
		p.agent(n, trimLeft(text[len("user-agent:"):]))
	default:
		p.general(n, text)
		return
	}
	if p.cur >= 0 {
		p.groups[p.cur].endLine = int32(n)
	}
}

// general reads a trimmed, non-empty line that is not a well-spelt rule or
// User-agent: any field, misspelt or unknown, or none.
func (p *parser) general(n int, text string) {
	key, value, ok := splitLine(text)
	field, known, exact := lookupField(key)
	switch {
	case !ok && known:
		// Google's parser, crawler-commons and protego all read a field
		// name, whitespace and one value as if the colon were there.
		p.warn(n, "no colon: %q read as %q", text, field+": "+value)
	case !ok && key != "" && !exact:
		// Two words whose first is a misspelt field: the typo matters
		// more than the colon.
		p.unknownField(n, key, value, false)
		p.extend(n, "")
		return
	case !ok:
		p.warn(n, "no colon: not a robots.txt line; ignored")
		p.extend(n, "")
		return
	case !known && exact:
		p.notDefined(n, key)
	case !known:
		p.unknownField(n, key, value, true)
	case !exact:
		p.warn(n, "%q read as %q", key, field)
	}
	p.field(n, field, value)
	p.extend(n, field)
}

// extend makes line n the end of the current group's span. Every line of a
// group but the file-wide Sitemap belongs to it, ignored lines included, so
// that their warnings show with the group.
func (p *parser) extend(n int, field string) {
	if p.cur >= 0 && field != "sitemap" {
		p.groups[p.cur].endLine = int32(n)
	}
}

func (p *parser) field(n int, field string, value string) {
	switch field {
	case "user-agent":
		p.agent(n, value)
	case "allow", "disallow":
		if k := len(p.r.warnings); k > 0 && p.r.warnings[k-1].Line == n && value != "" {
			// A misspelling or a missing colon, read as meant: its
			// finding is about this rule (see Concerns).
			p.finding(n, value)
		}
		p.rule(n, field == "allow", value)
	case "sitemap":
		if len(value) == 0 {
			p.warn(n, "empty Sitemap; ignored")
			return
		}
		p.sitemap(n, value)
	case "crawl-delay":
		p.crawlDelay(n, value)
	case "content-usage":
		p.contentUsage(n, value)
	case "content-signal":
		p.contentSignal(n, value)
	}
}

func (p *parser) agent(n int, value string) {
	token := value
	switch {
	case value == "*":
	case value != "" && value[0] == '*' && (value[1] == ' ' || value[1] == '\t'):
		// Google's parser reads "* (everyone else)" as the "*" group.
		token = "*"
		p.warn(n, "User-agent %q read as %q", value, token)
	case value == "":
		p.warn(n, "empty User-agent names no crawler; its group applies to none")
	default:
		token = ProductToken(value)
		switch {
		case token == "":
			// The line still starts or joins a group, so that its rules
			// do not fall to the group above (RFC 9309 section 2.2.1).
			token = value
			p.warn(n, "User-agent %q has no product token; its group applies to no crawler", value)
		case token != value:
			// Every major crawler reads a User-agent line by its product
			// token (RFC 9309 section 2.2.1): worth knowing, not fixing.
			// Without fmt: many files have one such line per group.
			p.r.warnings = append(p.r.warnings, Warning{Line: n, Severity: SeverityNote,
				Message: "User-agent " + quoted(value) + " read as its product token " + quoted(token)})
		}
	}
	if p.cur < 0 || p.inRules {
		p.closeGroup()
		p.groups = append(p.groups, group{line: int32(n), delay: -1})
		p.ruleLines = append(p.ruleLines, 0)
		p.cur = len(p.groups) - 1
		p.inRules = false
	}
	p.agents = append(p.agents, token)
}

func (p *parser) rule(n int, allow bool, value string) {
	if p.cur < 0 {
		p.stray(n, ruleKind(allow))
		return
	}
	p.inRules = true
	p.ruleLines[p.cur]++
	if value == "" {
		p.empties = append(p.empties, emptyRule{line: n, group: p.cur, allow: allow})
		return
	}
	// Normalised once, here, and kept only where that changes it: a
	// pattern is compiled from its normalised text, without an
	// allocation, whenever its group is decided.
	norm, err := match.Normalize(value)
	if err != nil {
		p.badPattern(n, ruleKind(allow), value, err)
		return
	}
	// Normalize returns value itself when it changes nothing.
	if unsafe.StringData(norm) != unsafe.StringData(value) {
		p.norms = append(p.norms, normed{rule: int32(len(p.rules)), norm: norm})
	}
	if strings.IndexByte(value, '&') >= 0 {
		p.entityInPattern(n, ruleKind(allow), value)
	}
	p.patterns = append(p.patterns, value...)
	line := uint32(n)
	if allow {
		line |= ruleAllow
	} else {
		p.disallows = true
	}
	p.rules = append(p.rules, rule{end: uint32(len(p.patterns)), line: line})
}

// ruleKind returns the directive of an Allow or a Disallow rule.
func ruleKind(allow bool) string {
	if allow {
		return "Allow"
	}
	return "Disallow"
}

// maxCrawlDelay caps a Crawl-delay, in seconds (about 11.6 days), so
// that any delay a site asks for fits a time.Duration.
const maxCrawlDelay = 1_000_000

// decimal reports whether s is digits with at most one ".", the only
// spelling of a delay read: ParseFloat alone would also take "Inf", "NaN",
// signs, exponents and hexadecimal.
func decimal(s string) bool {
	dot, digits := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits = true
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits
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
			p.note(e.line, "empty Allow matches nothing; it has no effect")
		case p.ruleLines[e.group] > 1:
			p.note(e.line, "empty Disallow disallows nothing; the group's other rules decide")
		}
	}
	slices.SortStableFunc(p.r.warnings, func(a, b Warning) int { return cmp.Compare(a.Line, b.Line) })
}

func (p *parser) crawlDelay(n int, value string) {
	if p.cur < 0 {
		p.warn(n, "Crawl-delay before any User-agent line; ignored")
		return
	}
	if !decimal(value) {
		p.warn(n, "Crawl-delay %q is not a number of seconds; ignored", value)
		return
	}
	// A decimal fails to parse only when too large for a float: it then
	// reads as +Inf, capped below like any huge delay.
	secs, _ := strconv.ParseFloat(value, 64)
	if secs > maxCrawlDelay {
		// A site asking for more than the cap still asks for a long delay:
		// keeping the cap is politer than ignoring the line.
		p.warn(n, "Crawl-delay %q is above %d seconds; read as %d", value, maxCrawlDelay, maxCrawlDelay)
		secs = maxCrawlDelay
	}
	// Unlike a rule, a Crawl-delay does not end a run of User-agent lines:
	// RFC 9309 section 2.2.4 lets other records never change how the
	// defined ones group. It belongs to every agent of the group, and the
	// largest of several is kept, the politest reading.
	g := &p.groups[p.cur]
	if d := time.Duration(secs * float64(time.Second)); d > g.delay {
		g.delay = d
	}
}
