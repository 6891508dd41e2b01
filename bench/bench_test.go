package bench

import (
	"testing"

	"github.com/crawlkit/robots/policy"
	"github.com/temoto/robotstxt"
)

// Every benchmark has an "ours" and a "peer" variant measuring the same
// work, named so that cmd/benchtable can put them side by side.

// Sinks keep results alive so that the compiler cannot drop the work.
var (
	sinkOurs  *policy.Robots
	sinkPeer  *robotstxt.RobotsData
	sinkCount int
)

// BenchmarkParse parses a set of files per operation: the whole corpus,
// the typical files, or the generated 20,000-rule file. Each file is parsed
// whole and as served, so both libraries read the same bytes.
func BenchmarkParse(b *testing.B) {
	b.Run("corpus", func(b *testing.B) { benchParse(b, contents(needCorpus(b).files)) })
	b.Run("typical", func(b *testing.B) { benchParse(b, contents(needCorpus(b).typical())) })
	large, _ := largeRobots()
	b.Run("rules20k", func(b *testing.B) { benchParse(b, [][]byte{large}) })
}

func contents(files []corpusFile) [][]byte {
	data := make([][]byte, len(files))
	for i, f := range files {
		data[i] = f.data
	}
	return data
}

func benchParse(b *testing.B, files [][]byte) {
	var size int64
	for _, f := range files {
		size += int64(len(f))
	}
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, f := range files {
				sinkOurs = policy.Parse(f)
			}
		}
	})
	b.Run("peer", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, f := range files {
				r, err := robotstxt.FromBytes(f)
				if err != nil {
					b.Fatal(err)
				}
				sinkPeer = r
			}
		}
	})
}

// BenchmarkDecide measures one decision per operation for agent, on files
// parsed beforehand: iteration k decides file k mod F against path k mod U,
// the pairing the corpus README fixes. For the peer it times TestAgent,
// the call a user makes per URL, group selection included.
func BenchmarkDecide(b *testing.B) {
	b.Run("corpus", func(b *testing.B) {
		c := needCorpus(b)
		benchDecide(b, contents(c.files), c.urls, 0)
	})
	b.Run("typical", func(b *testing.B) {
		c := needCorpus(b)
		benchDecide(b, contents(c.typical()), c.urls, 0)
	})
	large, paths := largeRobots()
	b.Run("rules20k", func(b *testing.B) { benchDecide(b, [][]byte{large}, paths, 0) })
	b.Run("stars", func(b *testing.B) {
		benchDecide(b, [][]byte{starRobots}, []string{starPath}, int64(len(starPath)))
	})
}

// benchDecide runs the ours and peer decision benchmarks; pathBytes, when
// not zero, is the size of the one path, reported as throughput.
func benchDecide(b *testing.B, files [][]byte, paths []string, pathBytes int64) {
	ours := make([]*policy.Robots, len(files))
	peer := make([]*robotstxt.RobotsData, len(files))
	for i, f := range files {
		ours[i] = policy.Parse(f)
		r, err := robotstxt.FromBytes(f)
		if err != nil {
			b.Fatal(err)
		}
		peer[i] = r
	}
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(pathBytes)
		fi, pi, allowed := 0, 0, 0
		for b.Loop() {
			if ours[fi].Allowed(paths[pi], agent) {
				allowed++
			}
			if fi++; fi == len(ours) {
				fi = 0
			}
			if pi++; pi == len(paths) {
				pi = 0
			}
		}
		sinkCount = allowed
	})
	b.Run("peer", func(b *testing.B) {
		b.SetBytes(pathBytes)
		fi, pi, allowed := 0, 0, 0
		for b.Loop() {
			if peer[fi].TestAgent(paths[pi], agent) {
				allowed++
			}
			if fi++; fi == len(peer) {
				fi = 0
			}
			if pi++; pi == len(paths) {
				pi = 0
			}
		}
		sinkCount = allowed
	})
}
