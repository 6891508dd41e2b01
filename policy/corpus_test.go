package policy

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corpusDir holds the real robots.txt files committed with the module,
// so that the corpus tests mean something on a clean clone.
const corpusDir = "../testdata/robots-corpus"

// TestCorpusVerdicts decides the committed table of URLs for the sample
// files and compares each decision, and the line of the rule that made
// it, with the table's. The table was computed once and a sample of its
// rows checked by hand against the files (testdata/verdicts.md).
func TestCorpusVerdicts(t *testing.T) {
	f, err := os.Open("testdata/verdicts.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 500 || strings.Join(rows[0], ",") != "file,agent,url,expected,line" {
		t.Fatalf("verdicts.csv: %d rows, header %q; want at least 500 rows under file,agent,url,expected,line", len(rows), rows[0])
	}
	parsed := map[string]*Robots{}
	verdicts := map[string]int{}
	for i, row := range rows[1:] {
		file, agent, url, expected := row[0], row[1], row[2], row[3]
		line, err := strconv.Atoi(row[4])
		if err != nil || (expected != "allowed" && expected != "disallowed") {
			t.Fatalf("verdicts.csv line %d: %q", i+2, row)
		}
		r := parsed[file]
		if r == nil {
			data, err := os.ReadFile(filepath.Join(corpusDir, file))
			if err != nil {
				t.Fatal(err)
			}
			r = Parse(Truncate(data, MaxSize))
			parsed[file] = r
		}
		d := r.Decide(url, agent)
		if d.Allowed != (expected == "allowed") || d.Rule.Line != line {
			t.Errorf("%s: %s for %s = %v (rule line %d), want %s by line %d", file, url, agent, d, d.Rule.Line, expected, line)
		}
		verdicts[expected]++
	}
	if verdicts["allowed"] < 100 || verdicts["disallowed"] < 100 {
		t.Errorf("verdicts: %v; want at least 100 of each", verdicts)
	}
}

// TestCorpusInvariants checks, on every real file of the committed
// corpus, what each file says of itself, read
// by a scanner of its own rather than by the parser: /robots.txt is always
// allowed; every literal Disallow path (no "*", "$" or escape) is refused
// for each agent its group names, unless an Allow at least as long may
// match it; every literal Allow path is allowed unless a longer Disallow
// may match it. Agents of the "*" groups are checked as a crawler that no
// group names.
func TestCorpusInvariants(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	// urls.txt is the corpus's list of URLs, not a robots.txt file.
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "urls.txt" })
	if len(files) < 100 {
		t.Fatalf("%d files in %s, want the committed corpus", len(files), corpusDir)
	}
	var refusals, exceptions, skipped int
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		data = Truncate(data, MaxSize)
		r := Parse(data)
		name := filepath.Base(file)
		for _, tok := range []string{"Googlebot", unnamedBot, "*"} {
			for _, p := range []string{"/robots.txt", "/robots.txt?x=1"} {
				if !r.Allowed(p, tok) {
					t.Errorf("%s: %s refused for %s", name, p, tok)
				}
			}
		}
		groups, ok := scanGroups(data)
		if !ok {
			skipped++
			continue // a line the scanner cannot read for sure
		}
		for tok, rules := range rulesByAgent(groups) {
			agent := r.Agent(tok)
			for _, ru := range rules {
				if !isLiteralPath(ru.path) || ru.path == "/robots.txt" {
					continue
				}
				switch {
				case !ru.allow && !mayBeOverridden(ru, rules, false):
					refusals++
					if agent.Allowed(ru.path) {
						t.Errorf("%s: %s allowed for %s, want refused by Disallow: %s (line %d)", name, ru.path, tok, ru.path, ru.line)
					}
				case ru.allow && !mayBeOverridden(ru, rules, true):
					exceptions++
					if !agent.Allowed(ru.path) {
						t.Errorf("%s: %s refused for %s, want allowed by Allow: %s (line %d): %v", name, ru.path, tok, ru.path, ru.line, agent.Decide(ru.path))
					}
				}
			}
		}
	}
	t.Logf("%d files (%d skipped by the scanner): %d literal Disallow and %d literal Allow paths checked", len(files), skipped, refusals, exceptions)
	if refusals < 200 || exceptions < 50 {
		t.Errorf("checked %d literal Disallow and %d literal Allow paths, want at least 200 and 50", refusals, exceptions)
	}
}

// unnamedBot is a crawler that no file of the corpus names.
const unnamedBot = "CorpusCheckBot"

// scannedRule is one Allow or Disallow line as the scanner reads it.
type scannedRule struct {
	allow bool
	path  string
	line  int
}

// scannedGroup is one group as the scanner reads it: its agents' values
// and its rules.
type scannedGroup struct {
	agents []string
	rules  []scannedRule
}

// scanGroups reads data as RFC 9309 section 2.2 writes it: "field:
// value" lines, "#" comments, a User-agent line after a rule starting a
// new group. It reports false for a file with a line that might mean a
// User-agent, Allow or Disallow some other way (a misspelling, no colon),
// since the parser reads some of those as meant.
func scanGroups(data []byte) ([]scannedGroup, bool) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var groups []scannedGroup
	afterRule := true
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.Trim(line, " \t")
		if line == "" {
			continue
		}
		field, value, found := strings.Cut(line, ":")
		field = strings.ToLower(strings.Trim(field, " \t"))
		value = strings.Trim(value, " \t")
		switch {
		case found && field == "user-agent":
			if afterRule {
				groups = append(groups, scannedGroup{})
			}
			g := &groups[len(groups)-1]
			g.agents = append(g.agents, value)
			afterRule = false
		case found && (field == "allow" || field == "disallow"):
			if len(groups) > 0 && value != "" {
				g := &groups[len(groups)-1]
				g.rules = append(g.rules, scannedRule{allow: field == "allow", path: value, line: i + 1})
			}
			afterRule = len(groups) > 0
		case strings.Contains(field, "agent") || strings.Contains(field, "allow"):
			return nil, false
		}
	}
	return groups, true
}

// rulesByAgent gathers the rules of every group naming a product token,
// under the token as the file first spells it, and those of the "*"
// groups under unnamedBot.
// A value that is neither "*" nor a plain token (with an optional
// "/version") is left out, and so is any token it might be read as.
func rulesByAgent(groups []scannedGroup) map[string][]scannedRule {
	byKey := map[string][]scannedRule{}
	spelling := map[string]string{}
	unsure := map[string]bool{}
	for _, g := range groups {
		for _, v := range g.agents {
			tok, _, _ := strings.Cut(v, "/")
			switch {
			case v == "*":
				tok = unnamedBot
			case tok == "" || strings.Trim(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" || strings.ContainsAny(v, " \t*"):
				unsure[strings.ToLower(strings.TrimRight(tok, "* \t"))] = true
				if strings.HasPrefix(v, "*") {
					unsure[strings.ToLower(unnamedBot)] = true
				}
				continue
			}
			key := strings.ToLower(tok)
			if _, ok := spelling[key]; !ok {
				spelling[key] = tok // asked for as the file first writes it
			}
			byKey[key] = append(byKey[key], g.rules...)
		}
	}
	out := map[string][]scannedRule{}
	for key, rules := range byKey {
		if !unsure[key] {
			out[spelling[key]] = rules
		}
	}
	return out
}

// isLiteralPath reports whether p is a path whose every octet stands for
// itself once normalised, and that a server would serve as written: no
// wildcard, anchor, escape, space, dot segment or repeated slash, nothing
// outside printable ASCII.
func isLiteralPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "*$% \"<>\\^`{|}") || strings.Contains(p, "/.") || strings.Contains(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] >= 0x7f {
			return false
		}
	}
	return true
}

// mayBeOverridden reports whether a rule of the other kind among rules
// may match ru's path and win over ru: for a Disallow, an Allow at least as
// long (an Allow wins a tie); for an Allow, a longer Disallow. It reads
// lengths generously (each octet that may become an escape counts three)
// and a pattern that is not plain text may match anything.
func mayBeOverridden(ru scannedRule, rules []scannedRule, allow bool) bool {
	for _, o := range rules {
		if o.allow == ru.allow {
			continue
		}
		n := 0
		for i := 0; i < len(o.path); i++ {
			if c := o.path[i]; c > ' ' && c < 0x7f && !strings.ContainsRune("%\"<>\\^`{|}", rune(c)) {
				n++
			} else {
				n += 3
			}
		}
		if n < len(ru.path) || allow && n == len(ru.path) {
			continue // shorter: cannot win
		}
		prefix, _, _ := strings.Cut(o.path, "*")
		prefix = strings.TrimSuffix(prefix, "$")
		if strings.ContainsAny(prefix, "%") || strings.HasPrefix(ru.path, prefix) {
			return true
		}
		for i := 0; i < len(prefix); i++ {
			if prefix[i] >= 0x7f {
				return true
			}
		}
	}
	return false
}
