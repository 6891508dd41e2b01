package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// agent is the product token both libraries decide for. A named token
// rather than "*" makes every decision go through group selection.
const agent = "Googlebot"

// corpusEnv names the environment variable that overrides defaultCorpus.
const corpusEnv = "ROBOTS_CORPUS"

// defaultCorpus is the corpus committed with the module, as seen from
// this directory, which is where go test runs the package.
const defaultCorpus = "../testdata/robots-corpus"

// typicalCount is how many files around the median size make up the
// typical file: the middle tenth of the 147-file corpus.
const typicalCount = 15

// corpusFile is one robots.txt file of the corpus.
type corpusFile struct {
	name string
	data []byte
}

// corpus is the benchmark corpus. Files are in byte order of name
// and urls in file order, the order the corpus README fixes so that every
// harness decides the same (file, url) pairs.
type corpus struct {
	files []corpusFile
	urls  []string
}

// typical returns the typicalCount files nearest the median size (sizes
// tied are ordered by name), in byte order of name.
func (c *corpus) typical() []corpusFile {
	bySize := slices.Clone(c.files)
	slices.SortStableFunc(bySize, func(a, b corpusFile) int { return cmp.Compare(len(a.data), len(b.data)) })
	start := (len(bySize) - typicalCount) / 2
	mid := bySize[start : start+typicalCount]
	slices.SortFunc(mid, func(a, b corpusFile) int { return strings.Compare(a.name, b.name) })
	return mid
}

// largest is the corpus's largest file, docs.oracle.com: 833 KiB of
// rules, larger than a crawler reads (RFC 9309 section 2.5), parsed whole
// by both libraries.
const largest = "docs.oracle.com.txt"

// named returns the file called name, in a list of one, failing tb when
// the corpus lacks it.
func (c *corpus) named(tb testing.TB, name string) []corpusFile {
	for _, f := range c.files {
		if f.name == name {
			return []corpusFile{f}
		}
	}
	tb.Fatalf("corpus has no %s", name)
	return nil
}

// errNoCorpus reports that the corpus directory does not exist.
var errNoCorpus = errors.New("corpus not found")

// loadCorpus reads the corpus once per test binary; it is never modified
// after loading, so sharing it between tests is safe.
var loadCorpus = sync.OnceValues(func() (*corpus, error) {
	dir := os.Getenv(corpusEnv)
	if dir == "" {
		dir = defaultCorpus
	}
	if _, err := os.Stat(filepath.Join(dir, "urls.txt")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s (set %s to its directory)", errNoCorpus, dir, corpusEnv)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	c := &corpus{}
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if filepath.Base(path) == "urls.txt" {
			c.urls, err = readLines(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			continue
		}
		c.files = append(c.files, corpusFile{name: filepath.Base(path), data: data})
	}
	if len(c.files) < typicalCount || len(c.urls) == 0 {
		return nil, fmt.Errorf("corpus at %s: %d files and %d urls, want at least %d files and one url",
			dir, len(c.files), len(c.urls), typicalCount)
	}
	return c, nil
})

func readLines(data []byte) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines, sc.Err()
}

// needCorpus returns the corpus, skipping tb when it is absent and failing
// it when it cannot be read.
func needCorpus(tb testing.TB) *corpus {
	tb.Helper()
	c, err := loadCorpus()
	if errors.Is(err, errNoCorpus) {
		tb.Skipf("skipping: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
