package policy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlkit/robots/internal/norm"
	"github.com/crawlkit/robots/internal/sfv"
	"github.com/crawlkit/robots/match"
)

// A robots.txt file can say what a crawler may do with what it fetches,
// as well as where it may go. Two lines carry that answer:
//
//   - Content-Usage, a rule of the IETF AIPREF working group: its grammar
//     and matching are those of draft-ietf-aipref-attach-05 (section 3),
//     and its value and the combining of preferences those of
//     draft-ietf-aipref-vocab-07 (sections 5 to 7), both read at commit
//     7ca0afce45b32609dc0131eebc2c0137469cdad9 of
//     github.com/ietf-wg-aipref/drafts.
//   - Content-Signal, Cloudflare's Content Signals Policy, as its
//     managed robots.txt documentation describes it
//     (src/content/docs/bots/additional-configurations/managed-robots-txt.mdx
//     at commit 00ff42ded28cf5d6f49bea768d40bdd805ca4a47 of
//     github.com/cloudflare/cloudflare-docs).
//
// This file holds both directives whole: their vocabulary, the reading of
// their lines (called from the parser), what a parsed file keeps of them
// and the answer for one URL.

// vocabulary is every label a preference is reported for, in the order
// Preferences lists them. A label of the AIPREF vocabulary is read from
// Content-Usage lines and headers by its own name; signal is its key in a
// Content-Signal line, "" for none. Adding a label is one entry here.
var vocabulary = [...]struct {
	label, signal string
	aipref        bool
}{
	{label: "train-ai", signal: "ai-train", aipref: true},
	{label: "search", signal: "search", aipref: true},
	// Content-Signal's ai-input (retrieval, grounding, real-time AI
	// answers) has no AIPREF label: it is reported on its own.
	{label: "ai-input", signal: "ai-input"},
}

// nLabels is the number of labels in vocabulary.
const nLabels = len(vocabulary)

// Labels returns the labels a preference is reported for, in the order
// Preferences lists them: "train-ai", "search" and "ai-input".
func Labels() []string {
	out := make([]string, nLabels)
	for i, v := range vocabulary {
		out[i] = v.label
	}
	return out
}

// LabelOf returns the label that name stands for, and whether it stands
// for one: a label in any letter case ("Train-AI" is "train-ai"), or a
// key of Content-Signal, which names the same uses ("ai-train" is
// "train-ai"). A crawler declaring its purposes may use either spelling.
func LabelOf(name string) (string, bool) {
	name = norm.Lower(strings.TrimSpace(name))
	for _, v := range vocabulary {
		if name == v.label || name == v.signal {
			return v.label, true
		}
	}
	return "", false
}

// droppedLabels are the labels that earlier versions of the AIPREF
// vocabulary defined and draft-ietf-aipref-vocab-07 no longer does, with
// what to write instead.
var droppedLabels = map[string]string{
	"tdm":         "write train-ai or search, or Disallow to keep crawlers out",
	"all":         "write train-ai or search, or Disallow to keep crawlers out",
	"bots":        "write train-ai or search, or Disallow to keep crawlers out",
	"ai":          "write train-ai",
	"genai":       "write train-ai",
	"train-genai": "write train-ai, which now covers generative training",
	"ai-use":      "no label replaces it; write train-ai or search",
	"ai-output":   "no label replaces it; write train-ai or search",
	"inference":   "no label replaces it; write train-ai or search",
}

// Usage is a site's preference for one category of use: unknown, allowed
// ("y") or disallowed ("n"), the three outcomes of
// draft-ietf-aipref-vocab-07 section 3. The zero value is UsageUnknown.
type Usage uint8

const (
	// UsageUnknown means no applicable line states a preference.
	UsageUnknown Usage = iota
	// UsageAllowed is "y" in Content-Usage, "yes" in Content-Signal.
	UsageAllowed
	// UsageDisallowed is "n" in Content-Usage, "no" in Content-Signal.
	UsageDisallowed
)

// String returns "y", "n" or "unknown".
func (u Usage) String() string {
	switch u {
	case UsageAllowed:
		return "y"
	case UsageDisallowed:
		return "n"
	}
	return "unknown"
}

// combine is the rule of draft-ietf-aipref-vocab-07 section 5.1 for two
// statements: a disallow wins, then an allow.
func combine(a, b Usage) Usage {
	if a == UsageDisallowed || b == UsageDisallowed {
		return UsageDisallowed
	}
	return max(a, b)
}

// Source says where a preference was stated.
type Source uint8

const (
	// SourceContentUsage is a Content-Usage line of robots.txt.
	SourceContentUsage Source = iota + 1
	// SourceContentSignal is a Content-Signal line of robots.txt.
	SourceContentSignal
	// SourceHeader is the Content-Usage header of a response.
	SourceHeader
)

// String returns "Content-Usage", "Content-Signal" or "Content-Usage
// header".
func (s Source) String() string {
	switch s {
	case SourceContentUsage:
		return "Content-Usage"
	case SourceContentSignal:
		return "Content-Signal"
	case SourceHeader:
		return "Content-Usage header"
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// PreferenceLine is one statement of preference: a Content-Usage or
// Content-Signal line of robots.txt, or a response's Content-Usage
// header.
type PreferenceLine struct {
	Source Source
	// Line is the 1-based line in robots.txt, 0 for a header.
	Line int
	// Path is a Content-Usage line's path as written, "" when it has
	// none and applies to every path.
	Path string
	// Value is the statement as written, without the path.
	Value string

	usage [nLabels]Usage
}

// Usage returns what the line states for label ("train-ai", "search",
// "ai-input"): UsageUnknown for a label it does not state or does not
// know.
func (l PreferenceLine) Usage(label string) Usage {
	if i := labelIndex(label); i >= 0 {
		return l.usage[i]
	}
	return UsageUnknown
}

// Directive returns the line as it would be written:
// "Content-Usage: /ai-ok/ train-ai=y".
func (l PreferenceLine) Directive() string {
	name := "Content-Usage"
	if l.Source == SourceContentSignal {
		name = "Content-Signal"
	}
	if l.Path != "" {
		return name + ": " + l.Path + " " + l.Value
	}
	return name + ": " + l.Value
}

// String returns the line with its number, "Content-Usage: train-ai=n
// (line 4)", or, for a header, "Content-Usage header: train-ai=n".
func (l PreferenceLine) String() string {
	if l.Source == SourceHeader {
		return l.Source.String() + ": " + l.Value
	}
	return l.Directive() + " (line " + strconv.Itoa(l.Line) + ")"
}

// Preference is the combined preference for one label, with the lines
// that stated it.
type Preference struct {
	// Label is "train-ai" or "search" (AIPREF), or "ai-input"
	// (Content-Signal only).
	Label string
	Usage Usage
	// From are the statements that gave Usage: those saying "n" when it
	// is UsageDisallowed, those saying "y" when UsageAllowed; none when
	// it is unknown.
	From []PreferenceLine
	// Resolved is, when Usage is that of another form of the URL than
	// its path as sent (see Agent.Preferences: "/public/../ai/x" read as
	// "/ai/x"), that form's path and query; empty otherwise.
	Resolved string
}

// Preferences is what a site prefers for the content of one URL, per
// label: from the Content-Usage rule with the longest matching path
// (rules of equally long paths combined), none for a path the crawler
// may not fetch, and from the Content-Signal lines of the crawler's
// groups and of the whole file, combined per label as
// draft-ietf-aipref-vocab-07 section 5.1 says: "n" if any says "n", else
// "y" if any says "y", else unknown. Content-Signal's ai-train counts as
// train-ai and its search as search.
type Preferences struct {
	// Labels holds one Preference per label, in the order train-ai,
	// search, ai-input.
	Labels []Preference
	// Disallowed reports whether robots.txt disallows the path, so that
	// no Content-Usage rule applies to it.
	Disallowed bool
}

// Label returns the preference for label, UsageUnknown for a label
// that Preferences does not report.
func (p Preferences) Label(label string) Preference {
	for _, x := range p.Labels {
		if x.Label == label {
			return x
		}
	}
	return Preference{Label: label}
}

// Combine returns the preferences of p and q together, the most
// restrictive per label (draft-ietf-aipref-vocab-07 section 5.1), such as
// a page's Content-Usage header with the robots.txt preference for its
// URL.
func (p Preferences) Combine(q Preferences) Preferences {
	out := Preferences{Labels: make([]Preference, nLabels), Disallowed: p.Disallowed || q.Disallowed}
	for i, v := range vocabulary {
		a, b := p.Label(v.label), q.Label(v.label)
		u := combine(a.Usage, b.Usage)
		out.Labels[i] = Preference{Label: v.label, Usage: u}
		for _, x := range [...]Preference{a, b} {
			if x.Usage == u && u != UsageUnknown {
				out.Labels[i].From = append(out.Labels[i].From, x.From...)
				if out.Labels[i].Resolved == "" {
					out.Labels[i].Resolved = x.Resolved
				}
			}
		}
	}
	return out
}

// String lists the preferences: "train-ai=n search=y ai-input=unknown".
func (p Preferences) String() string {
	parts := make([]string, 0, len(p.Labels))
	for _, x := range p.Labels {
		parts = append(parts, x.Label+"="+x.Usage.String())
	}
	return strings.Join(parts, " ")
}

// HeaderPreferences reads the Content-Usage header of a response, given
// its field lines (http.Header.Values), as draft-ietf-aipref-attach-05
// section 2 defines it: one Dictionary, the lines joined by commas as
// HTTP combines them. A value that is not a Dictionary states nothing.
func HeaderPreferences(values ...string) Preferences {
	l := PreferenceLine{Source: SourceHeader, Value: strings.Join(values, ", ")}
	if members, err := sfv.ParseDictionary(l.Value); err == nil {
		for _, m := range members {
			if i := aiprefIndex(m.Key); i >= 0 {
				l.usage[i] = tokenUsage(m)
			}
		}
	}
	return collect([]*PreferenceLine{&l})
}

// Preferences is shorthand for r.Agent(tokens...).Preferences(pathAndQuery).
func (r *Robots) Preferences(pathAndQuery string, tokens ...string) Preferences {
	return r.Agent(tokens...).Preferences(pathAndQuery)
}

// HasPreferences reports whether the file has a Content-Usage or
// Content-Signal line that was read.
func (r *Robots) HasPreferences() bool { return r != nil && len(r.prefs) > 0 }

// ContentSignals returns the Content-Signal lines before any group,
// which apply to every crawler, in file order.
func (r *Robots) ContentSignals() []PreferenceLine {
	if r == nil {
		return nil
	}
	var out []PreferenceLine
	for _, l := range r.prefs {
		if l.group < 0 {
			out = append(out, l.PreferenceLine)
		}
	}
	return out
}

// Preferences returns what the site prefers for the content of
// pathAndQuery (see Preferences), for every form of it that a server may
// serve, as Allowed decides them: the path as sent, with dot segments
// resolved, with repeated slashes merged and with "%2F" decoded where
// that reveals a dot segment. Per label the most restrictive form wins,
// so that no spelling of a URL evades an opt-out; a Preference that
// another form than the path as sent gave names it in Resolved. See
// PreferencesLiteral for the path alone.
//
// A Content-Usage rule's path matches as an Allow or Disallow pattern
// does (draft-ietf-aipref-attach-05 section 3.1): longest first, counted
// in octets of the normalised pattern. The path is disallowed as Allowed
// decides it. Its cost grows with the number of Content-Usage and
// Content-Signal lines in the file; a file with none allocates only the
// answer.
func (a Agent) Preferences(pathAndQuery string) Preferences {
	forms := alternates(pathAndQuery)
	allowed := a.AllowedLiteral(pathAndQuery) && a.allowedIn(forms[0], forms[1], forms[2])
	out := a.preferences(pathAndQuery, allowed)
	if a.owner == nil || len(a.owner.prefs) == 0 {
		return out
	}
	for _, form := range forms {
		if form == "" {
			continue
		}
		f := a.preferences(form, allowed)
		for i := range out.Labels {
			if x := f.Labels[i]; combine(out.Labels[i].Usage, x.Usage) != out.Labels[i].Usage {
				x.Resolved = form
				out.Labels[i] = x
			}
		}
	}
	return out
}

// PreferencesLiteral returns what the site prefers for the content of
// pathAndQuery itself, read literally, as AllowedLiteral reads it: the
// forms a server may resolve it to are not read, so "/public/../ai/"
// may be reported as "/public/" is where Preferences reports "/ai/".
func (a Agent) PreferencesLiteral(pathAndQuery string) Preferences {
	return a.preferences(pathAndQuery, a.AllowedLiteral(pathAndQuery))
}

// OptedOut reports whether the site's preference is "n" for every one of
// purposes, labels as Preferences reports them, in some form of
// pathAndQuery that a server may serve (see Preferences): a crawler
// whose every purpose the site refuses for the content it would get may
// not fetch it. It returns that form's preference for the first purpose,
// Resolved naming the form when it is not the path as sent. Without
// purposes it reports false.
func (a Agent) OptedOut(pathAndQuery string, purposes ...string) (Preference, bool) {
	if len(purposes) == 0 || a.owner == nil || len(a.owner.prefs) == 0 {
		return Preference{}, false
	}
	forms := alternates(pathAndQuery)
	allowed := a.AllowedLiteral(pathAndQuery) && a.allowedIn(forms[0], forms[1], forms[2])
	if p, out := a.optedOut(pathAndQuery, allowed, purposes); out {
		return p, true
	}
	for _, form := range forms {
		if form == "" {
			continue
		}
		if p, out := a.optedOut(form, allowed, purposes); out {
			p.Resolved = form
			return p, true
		}
	}
	return Preference{}, false
}

// optedOut is OptedOut for one form, path, of a URL whose forms are all
// allowed or not.
func (a Agent) optedOut(path string, allowed bool, purposes []string) (Preference, bool) {
	p := a.preferences(path, allowed)
	for _, label := range purposes {
		if p.Label(label).Usage != UsageDisallowed {
			return Preference{}, false
		}
	}
	return p.Label(purposes[0]), true
}

// preferences returns the preferences for the one form pathAndQuery of a
// URL, of which allowed reports whether robots.txt allows it.
func (a Agent) preferences(pathAndQuery string, allowed bool) Preferences {
	if a.owner == nil || len(a.owner.prefs) == 0 {
		out := collect(nil)
		out.Disallowed = !allowed
		return out
	}
	var buf [smallPath]byte
	path := match.AppendPath(buf[:0], pathAndQuery)
	var (
		said    []*PreferenceLine
		best    = -1
		longest []*PreferenceLine // the rules of the longest matching path
	)
	for i := range a.owner.prefs {
		l := &a.owner.prefs[i]
		if !a.holds(l.group) {
			continue
		}
		if l.Source == SourceContentSignal {
			said = append(said, &l.PreferenceLine)
			continue
		}
		if !allowed || l.Path != "" && !l.pattern.Match(path) {
			continue
		}
		n := 0
		if l.Path != "" {
			n = l.pattern.Len()
		}
		if n > best {
			best, longest = n, longest[:0]
		}
		if n == best {
			longest = append(longest, &l.PreferenceLine)
		}
	}
	out := collect(append(longest, said...))
	out.Disallowed = !allowed
	return out
}

// holds reports whether the lines of group gi, or of no group (-1),
// apply to the agent.
func (a Agent) holds(gi int32) bool {
	if gi < 0 {
		return true
	}
	if a.sel == nil {
		return false
	}
	_, found := slices.BinarySearch(a.sel.groups, int(gi))
	return found
}

// collect combines the statements that apply into Preferences.
func collect(lines []*PreferenceLine) Preferences {
	out := Preferences{Labels: make([]Preference, nLabels)}
	for i, v := range vocabulary {
		p := &out.Labels[i]
		p.Label = v.label
		for _, l := range lines {
			p.Usage = combine(p.Usage, l.usage[i])
		}
		if p.Usage == UsageUnknown {
			continue
		}
		for _, l := range lines {
			if l.usage[i] == p.Usage {
				p.From = append(p.From, *l)
			}
		}
	}
	return out
}

// prefLine is a Content-Usage or Content-Signal line as a parsed file
// keeps it.
type prefLine struct {
	PreferenceLine
	group   int32         // the group it belongs to, -1 before any
	pattern match.Pattern // a Content-Usage line's compiled Path
}

func labelIndex(label string) int {
	for i, v := range vocabulary {
		if v.label == label {
			return i
		}
	}
	return -1
}

// aiprefIndex returns the vocabulary index of an AIPREF label, or -1.
func aiprefIndex(key string) int {
	if i := labelIndex(key); i >= 0 && vocabulary[i].aipref {
		return i
	}
	return -1
}

func signalIndex(key string) int {
	for i, v := range vocabulary {
		if v.signal == key {
			return i
		}
	}
	return -1
}

// tokenUsage reads a member's value by draft-ietf-aipref-vocab-07
// section 6.4: the Token y or n, anything else unknown.
func tokenUsage(m sfv.Member) Usage {
	switch {
	case m.IsToken && m.Token == "y":
		return UsageAllowed
	case m.IsToken && m.Token == "n":
		return UsageDisallowed
	}
	return UsageUnknown
}

// contentUsage reads a Content-Usage line, a rule of the group being
// built (draft-ietf-aipref-attach-05 section 3): it ends a run of
// User-agent lines as Allow and Disallow do.
func (p *parser) contentUsage(n int, value string) {
	if p.cur < 0 {
		// RFC 9309's grammar has no rule outside a group, and the draft
		// adds Content-Usage to the rules: before any group it belongs
		// to none and applies to no crawler.
		p.fault(n, "Content-Usage before any User-agent line belongs to no group; ignored (put it under User-agent: *)")
		return
	}
	p.inRules = true
	l := prefLine{PreferenceLine: PreferenceLine{Source: SourceContentUsage, Line: n}, group: int32(p.cur)}
	pref := value
	// A value starting with "/" leads with a path, up to the first space
	// or tab (section 3.2); any other start means the path is absent.
	if strings.HasPrefix(value, "/") {
		path := value
		if sp := strings.IndexAny(value, " \t"); sp >= 0 {
			path, pref = value[:sp], trim(value[sp:])
		} else {
			pref = ""
		}
		// Compiled from a copy: a pattern may keep its text, and path is a
		// view of the caller's bytes.
		path = strings.Clone(path)
		pat, err := match.Compile(path)
		if err != nil {
			why := "contains a control character"
			if errors.Is(err, match.ErrInvalidEscape) {
				why = "has a % not followed by two hex digits"
			}
			p.warn(n, "Content-Usage path %q %s; ignored", path, why)
			return
		}
		l.Path, l.pattern = path, pat
		// Its findings concern only the paths its path matches as
		// written (Concerns).
		p.found = append(p.found, foundPattern{line: n, pattern: path, written: true})
	}
	l.Value = strings.Clone(pref)
	if pref == "" {
		p.warn(n, "Content-Usage states no preference, so every use is unknown; write a label and y or n, such as train-ai=n")
	} else if members, err := sfv.ParseDictionary(pref); err != nil {
		p.warn(n, "Content-Usage value %q is not a Structured Fields Dictionary (RFC 9651), so every use is unknown%s", pref, dictionaryHint(pref))
	} else {
		var f findings
		for _, m := range members {
			usageMember(&f, &l.PreferenceLine, m)
		}
		p.flush(n, &f)
	}
	p.r.prefs = append(p.r.prefs, l)
}

// usageMember reads one member of a Content-Usage value into l.
func usageMember(f *findings, l *PreferenceLine, m sfv.Member) {
	i := aiprefIndex(m.Key)
	switch {
	case i >= 0:
		l.usage[i] = tokenUsage(m)
		if l.usage[i] != UsageUnknown {
			return
		}
		switch lower := norm.Lower(m.Token); {
		case m.IsToken && (lower == "yes" || lower == "no" || lower == "y" || lower == "n"):
			f.note("Content-Usage %s=%s is an unknown preference; write %s=%s", m.Key, m.Token, m.Key, lower[:1])
		case m.IsToken:
			f.warn("Content-Usage %s=%s is an unknown preference; the value is y or n", m.Key, m.Token)
		default:
			f.warn("Content-Usage %s has no y or n token, so its preference is unknown; write %s=y or %s=n", m.Key, m.Key, m.Key)
		}
	case droppedLabels[m.Key] != "":
		f.note("Content-Usage label %q was dropped from the AI preference vocabulary and is ignored; %s", m.Key, droppedLabels[m.Key])
	case signalIndex(m.Key) >= 0 && labelIndex(m.Key) != signalIndex(m.Key):
		// A Content-Signal key written in a Content-Usage line.
		if j := signalIndex(m.Key); vocabulary[j].aipref {
			f.note("Content-Usage has no label %q; ignored: write %s", m.Key, vocabulary[j].label)
		} else {
			f.note("Content-Usage has no label %q, which only Content-Signal has; ignored", m.Key)
		}
	case m.Key == "ai-input":
		f.note("Content-Usage has no label %q, which only Content-Signal has; ignored", m.Key)
	default:
		f.note("Content-Usage label %q is not in the AI preference vocabulary (train-ai, search); ignored", m.Key)
	}
}

// dictionaryHint says what is most likely wrong with a Content-Usage
// value that is not a Dictionary.
func dictionaryHint(pref string) string {
	switch {
	case strings.ContainsFunc(pref, func(c rune) bool { return 'A' <= c && c <= 'Z' }) && lowerParses(pref):
		return "; labels and values are lower case: write train-ai=n"
	case strings.HasPrefix(pref, "*"):
		return "; a path starts with \"/\""
	}
	return "; write label=value pairs separated by commas, such as train-ai=n, search=y"
}

// lowerParses reports whether pref lower-cased is a Dictionary: whether
// its capitals are what is wrong with it.
func lowerParses(pref string) bool {
	_, err := sfv.ParseDictionary(norm.Lower(pref))
	return err == nil
}

// contentSignal reads a Content-Signal line: comma-separated key=yes or
// key=no pairs. Like Crawl-delay it is not a rule of RFC 9309 and does
// not end a run of User-agent lines (section 2.2.4); it belongs to every
// agent of the group being built, and before any group to every crawler.
func (p *parser) contentSignal(n int, value string) {
	if value == "" {
		p.warn(n, "empty Content-Signal; ignored")
		return
	}
	if strings.HasPrefix(value, "/") {
		p.warn(n, "Content-Signal takes no path; ignored (use Content-Usage for a path)")
		return
	}
	l := prefLine{PreferenceLine: PreferenceLine{Source: SourceContentSignal, Line: n, Value: strings.Clone(value)}, group: int32(p.cur)}
	var (
		seen [nLabels]bool
		f    findings
	)
	for pair := range strings.SplitSeq(value, ",") {
		pair = trim(pair)
		key, val, ok := strings.Cut(pair, "=")
		key, val = norm.Lower(trim(key)), norm.Lower(trim(val))
		if !ok || key == "" {
			f.warn("Content-Signal %q is not key=yes or key=no; ignored", pair)
			continue
		}
		i := signalIndex(key)
		if i < 0 {
			if j := aiprefIndex(key); j >= 0 {
				f.note("Content-Signal has no key %q; ignored: write %s=%s", key, vocabulary[j].signal, signalSpelling(val))
			} else {
				f.note("Content-Signal key %q is not one of search, ai-input, ai-train; ignored", key)
			}
			continue
		}
		var u Usage
		switch val {
		case "yes":
			u = UsageAllowed
		case "no":
			u = UsageDisallowed
		case "y", "n":
			f.note("Content-Signal %s=%s is not read; write %s=%s", key, val, key, signalSpelling(val))
			continue
		default:
			f.warn("Content-Signal %s=%q is neither yes nor no; ignored", key, val)
			continue
		}
		if seen[i] {
			f.warn("Content-Signal names %s more than once; the most restrictive value counts", key)
		}
		seen[i] = true
		l.usage[i] = combine(l.usage[i], u)
	}
	p.flush(n, &f)
	p.r.prefs = append(p.r.prefs, l)
}

// findings gathers what the members of one preference line are worth a
// word on, so that a line of many members costs one warning and one note
// at most, each naming the first finding and counting the others: a line
// of a thousand bad members must not hold a thousand messages.
type findings struct {
	firstWarning, firstNote string
	warnings, notes         int
}

func (f *findings) warn(format string, args ...any) {
	if f.warnings++; f.warnings == 1 {
		f.firstWarning = fmt.Sprintf(format, args...)
	}
}

func (f *findings) note(format string, args ...any) {
	if f.notes++; f.notes == 1 {
		f.firstNote = fmt.Sprintf(format, args...)
	}
}

// flush records the findings of line n.
func (p *parser) flush(n int, f *findings) {
	if f.warnings > 0 {
		p.warn(n, "%s%s", f.firstWarning, more(f.warnings))
	}
	if f.notes > 0 {
		p.note(n, "%s%s", f.firstNote, more(f.notes))
	}
}

// more counts the findings of a line past its first.
func more(k int) string {
	if k == 1 {
		return ""
	}
	return fmt.Sprintf(" (and %d more like it on this line)", k-1)
}

// signalSpelling returns a Content-Usage value as Content-Signal writes it.
func signalSpelling(val string) string {
	switch val {
	case "y", "yes":
		return "yes"
	case "n", "no":
		return "no"
	}
	return "yes or no"
}
