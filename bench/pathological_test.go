package bench

import (
	"strconv"
	"strings"
	"testing"

	"github.com/crawlkit/robots/policy"
	"github.com/temoto/robotstxt"
)

// starPattern is the pathological pattern: twelve wildcards between
// literal runs that a path of only "a"s keeps almost matching.
const starPattern = "/*a*a*a*a*a*a*a*a*a*a*a*b"

// starRobots and starPath are the pathological pattern case: a 2,000-byte
// path that matches every run of starPattern but the final "b", the input
// that makes a backtracking matcher retry every way of placing the runs.
var (
	starRobots = []byte("User-agent: *\nDisallow: " + starPattern + "\n")
	starPath   = "/" + strings.Repeat("a", 1999)
)

// manyRules is how many rules the generated large file holds.
const manyRules = 20000

// sections are the first path segments of the generated rules, as found on
// shops, news sites and forums.
var sections = []string{
	"account", "api", "archive", "blog", "cart", "catalog", "checkout", "docs",
	"forum", "help", "images", "media", "news", "products", "product", "profile",
	"search", "shop", "static", "tag", "user", "video", "wiki", "events",
}

// splitmix64 is a tiny deterministic generator, so the generated file is
// the same on every Go version and machine.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (s *splitmix64) intn(n int) int { return int(s.next() % uint64(n)) }

// ruleID returns the id segment of rule i. Ids are distinct, so no two
// rules share a literal prefix: i*7919 is a bijection modulo 36^4 because
// 7919 is prime to 36.
func ruleID(i int) string {
	const space = 36 * 36 * 36 * 36
	n := (i*7919 + 104729) % space
	id := strconv.FormatInt(int64(n+space), 36) // five digits, the first always "1"
	return id[1:]
}

// generatedRule returns rule i of the large file as a directive and value,
// and its literal prefix: the text up to its first wildcard, which a path
// extended with anything matches whenever the rule has no wildcard.
func generatedRule(rng *splitmix64, i int) (directive, value, prefix string) {
	prefix = "/" + sections[rng.intn(len(sections))] + "/" + ruleID(i)
	switch k := rng.intn(20); {
	case k < 12:
		return "Disallow", prefix + "/", prefix + "/"
	case k < 16:
		return "Allow", prefix + "/public/", prefix + "/public/"
	case k < 18:
		return "Disallow", prefix + "/*/print", prefix + "/"
	case k < 19:
		return "Disallow", prefix + ".html$", prefix + ".html"
	default:
		return "Disallow", prefix + "?*sort=", prefix + "?"
	}
}

// largeRobots returns a generated robots.txt file of manyRules rules in
// one "*" group, about 500 KiB, and paths to decide against it: half
// extend a rule's literal prefix, half share a section but no rule.
func largeRobots() (data []byte, paths []string) {
	rng := splitmix64(20260611)
	var b strings.Builder
	b.WriteString("# Generated: " + strconv.Itoa(manyRules) + " rules with distinct literal prefixes.\n")
	b.WriteString("User-agent: *\n")
	prefixes := make([]string, manyRules)
	for i := range manyRules {
		directive, value, prefix := generatedRule(&rng, i)
		b.WriteString(directive + ": " + value + "\n")
		prefixes[i] = prefix
	}
	const pathCount = 1024
	for i := range pathCount {
		if i%2 == 0 {
			paths = append(paths, prefixes[rng.intn(manyRules)]+"page-"+strconv.Itoa(rng.intn(50)))
			continue
		}
		// Ids past manyRules are never used by a rule.
		paths = append(paths, "/"+sections[rng.intn(len(sections))]+"/"+ruleID(manyRules+rng.intn(1000))+"/")
	}
	return []byte(b.String()), paths
}

// wildShare is the share, in percent, of the rules of the generated
// wildcard file that start with a wildcard: 30%, about the 6,083 of
// 20,000 of the file the issue measured.
const wildShare = 30

// wildRule returns rule i of the wildcard file when it starts with a
// wildcard: its directive, its value and a path that it matches. Every
// such rule's first literal run holds its distinct id.
func wildRule(rng *splitmix64, i int) (directive, value, path string) {
	id := ruleID(i)
	section := sections[rng.intn(len(sections))]
	switch rng.intn(4) {
	case 0:
		return "Disallow", "/*/" + id + "/print", "/" + section + "/" + id + "/print"
	case 1:
		return "Disallow", "*" + id + ".pdf$", "/" + section + "/files/" + id + ".pdf"
	case 2:
		return "Allow", "/*?" + id + "=", "/" + section + "?" + id + "=1"
	}
	return "Disallow", "/*" + id + "-draft*", "/" + section + "/x" + id + "-draft/2"
}

// wildRobots returns a generated robots.txt file like largeRobots', but
// with wildShare percent of its rules starting with a wildcard, and paths
// to decide against it: half are matched by a wildcard-first rule, half
// share a section but no rule.
func wildRobots() (data []byte, paths []string) {
	rng := splitmix64(20261201)
	var b strings.Builder
	b.WriteString("# Generated: " + strconv.Itoa(manyRules) + " rules, " + strconv.Itoa(wildShare) + "% starting with a wildcard.\n")
	b.WriteString("User-agent: *\n")
	var matching []string
	for i := range manyRules {
		if rng.intn(100) < wildShare {
			directive, value, path := wildRule(&rng, i)
			b.WriteString(directive + ": " + value + "\n")
			matching = append(matching, path)
			continue
		}
		directive, value, _ := generatedRule(&rng, i)
		b.WriteString(directive + ": " + value + "\n")
	}
	const pathCount = 1024
	for i := range pathCount {
		if i%2 == 0 {
			paths = append(paths, matching[rng.intn(len(matching))])
			continue
		}
		paths = append(paths, "/"+sections[rng.intn(len(sections))]+"/"+ruleID(manyRules+rng.intn(1000))+"/")
	}
	return []byte(b.String()), paths
}

// TestGeneratedCases checks that the generated inputs are what README.md
// says they are, since the pathological benchmarks mean nothing otherwise.
func TestGeneratedCases(t *testing.T) {
	data, paths := largeRobots()
	r := policy.Parse(data)

	t.Run("large file fits within MaxSize and is about 500 KiB", func(t *testing.T) {
		if len(data) > policy.MaxSize || len(data) < 480<<10 {
			t.Errorf("size %d bytes, want between %d and %d", len(data), 480<<10, policy.MaxSize)
		}
	})
	t.Run("large file has one group of every rule and no warnings", func(t *testing.T) {
		if g := r.Groups(); len(g) != 1 || len(g[0].Rules) != manyRules {
			t.Fatalf("got %d groups, want 1 with %d rules", len(g), manyRules)
		}
		if w := r.Warnings(); len(w) != 0 {
			t.Errorf("got %d warnings, first %v", len(w), w[0])
		}
	})
	t.Run("literal prefixes are distinct", func(t *testing.T) {
		seen := map[string]int{}
		for _, rule := range r.Groups()[0].Rules {
			prefix, _, _ := strings.Cut(strings.TrimSuffix(rule.Pattern, "$"), "*")
			if line, ok := seen[prefix]; ok {
				t.Fatalf("lines %d and %d share the literal prefix %q", line, rule.Line, prefix)
			}
			seen[prefix] = rule.Line
		}
	})
	t.Run("paths outside the rules match nothing", func(t *testing.T) {
		for i := 1; i < len(paths); i += 2 {
			if d := r.Decide(paths[i], agent); d.Matched {
				t.Errorf("%s matched %v", paths[i], d.Rule)
			}
		}
	})
	t.Run("paths extending a literal rule match it", func(t *testing.T) {
		matched := 0
		for i := 0; i < len(paths); i += 2 {
			if r.Decide(paths[i], agent).Matched {
				matched++
			}
		}
		// Rules ending in "$" or holding "*" need more than the prefix, so
		// not every such path matches; three in five rules are literal.
		if matched < len(paths)/2*3/5 {
			t.Errorf("%d of %d paths matched a rule", matched, len(paths)/2)
		}
	})
	wild, wildPaths := wildRobots()
	w := policy.Parse(wild)
	t.Run("wildcard file fits within MaxSize, one group of every rule, the share starting with a wildcard", func(t *testing.T) {
		if len(wild) > policy.MaxSize {
			t.Errorf("size %d bytes, over %d", len(wild), policy.MaxSize)
		}
		g := w.Groups()
		if len(g) != 1 || len(g[0].Rules) != manyRules || len(w.Warnings()) != 0 {
			t.Fatalf("got %d groups, %d warnings, want 1 group of %d rules and none", len(g), len(w.Warnings()), manyRules)
		}
		first := 0
		for _, rule := range g[0].Rules {
			if strings.HasPrefix(rule.Pattern, "*") || strings.HasPrefix(rule.Pattern, "/*") {
				first++
			}
		}
		if share := first * 100 / manyRules; share < wildShare-2 || share > wildShare+2 {
			t.Errorf("%d of %d rules start with a wildcard, want about %d%%", first, manyRules, wildShare)
		}
	})
	t.Run("wildcard file paths: half matched by a wildcard-first rule, half by none", func(t *testing.T) {
		for i, p := range wildPaths {
			d := w.Decide(p, agent)
			wildFirst := d.Matched && (strings.HasPrefix(d.Rule.Pattern, "*") || strings.HasPrefix(d.Rule.Pattern, "/*"))
			if i%2 == 0 && !wildFirst || i%2 == 1 && d.Matched {
				t.Errorf("path %d %s: %v", i, p, d)
			}
		}
	})
	t.Run("star path is 2000 bytes and matches neither library", func(t *testing.T) {
		if len(starPath) != 2000 || strings.Count(starPattern, "*") != 12 {
			t.Fatalf("path %d bytes, pattern %d stars", len(starPath), strings.Count(starPattern, "*"))
		}
		if !policy.Parse(starRobots).Allowed(starPath, agent) {
			t.Error("policy disallowed the star path")
		}
		peer, err := robotstxt.FromBytes(starRobots)
		if err != nil {
			t.Fatal(err)
		}
		if !peer.TestAgent(starPath, agent) {
			t.Error("robotstxt disallowed the star path")
		}
	})
}
