package regress

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	"github.com/crawlkit/robots/policy"
)

// typicalCount is how many files around the median size make up the
// typical files: the middle tenth of the 147-file corpus, as in the bench
// package.
const typicalCount = 15

// typical returns the typicalCount files of c nearest the median size,
// sizes tied kept in name order, and their bytes.
func typical(c *corpusData) (files [][]byte, size int64) {
	bySize := slices.Clone(c.files)
	slices.SortStableFunc(bySize, func(a, b []byte) int { return cmp.Compare(len(a), len(b)) })
	start := (len(bySize) - typicalCount) / 2
	files = bySize[start : start+typicalCount]
	for _, f := range files {
		size += int64(len(f))
	}
	return files, size
}

// BenchmarkFirst is what a broad crawl pays for an origin it meets once:
// per operation, every file of the set is parsed and decided once, for
// decideAgent on "/", the method the fastest published parser is measured
// by. Instructions or time per file are those per operation divided by
// the files of the set (147 for the corpus, typicalCount for typical).
func BenchmarkFirst(b *testing.B) {
	b.Run("corpus", func(b *testing.B) {
		c := needCorpus(b)
		benchFirst(b, c.files, c.size)
	})
	b.Run("typical", func(b *testing.B) {
		files, size := typical(needCorpus(b))
		benchFirst(b, files, size)
	})
}

func benchFirst(b *testing.B, files [][]byte, size int64) {
	b.SetBytes(size)
	allowed := 0
	for b.Loop() {
		for _, f := range files {
			if policy.Parse(f).Allowed("/", decideAgent) {
				allowed++
			}
		}
	}
	sinkCount = allowed
}

// BenchmarkTokenize is the floor of a parse: per operation, every corpus
// file is cut into lines (LF, CR or CRLF), each line's comment dropped,
// its field name and value split at the colon and trimmed of spaces and
// tabs, and the field named by its length and first letter among the four
// of RFC 9309; nothing is kept, nothing is checked further. Every parser
// does at least this much per byte.
func BenchmarkTokenize(b *testing.B) {
	c := needCorpus(b)
	b.SetBytes(c.size)
	fields := 0
	for b.Loop() {
		for _, f := range c.files {
			fields += tokenize(f)
		}
	}
	sinkCount = fields
}

// tokenize returns the bytes of the values of the lines of data that name
// one of the fields of RFC 9309.
func tokenize(data []byte) int {
	n := 0
	hasCR := bytes.IndexByte(data, '\r') >= 0
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data) - pos
		}
		line := data[pos : pos+end]
		pos += end + 1
		if hasCR {
			// A CR ends a line too, alone or before an LF.
			if cr := bytes.IndexByte(line, '\r'); cr >= 0 {
				line, pos = line[:cr], pos-end+cr
			}
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		key, value := trim(line[:colon]), trim(line[colon+1:])
		if len(key) == 0 {
			continue
		}
		switch c := key[0] | 0x20; {
		case c == 'u' && len(key) == 10, c == 'a' && len(key) == 5, c == 'd' && len(key) == 8, c == 's' && len(key) == 7:
			n += len(value)
		}
	}
	return n
}

// trim drops spaces and tabs from both ends of b.
func trim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}
