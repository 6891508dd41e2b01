package bench

import (
	"runtime"
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
// the typical files, the largest corpus file, one of the generated
// 20,000-rule files, or a file of one group and two rules. Each file is
// parsed whole and as served, so both libraries read the same bytes.
// Each also reports what the parsed files hold in memory (see
// heldPerFile).
func BenchmarkParse(b *testing.B) {
	b.Run("tiny", func(b *testing.B) { benchParse(b, [][]byte{tinyRobots}) })
	b.Run("corpus", func(b *testing.B) { benchParse(b, contents(needCorpus(b).files)) })
	b.Run("typical", func(b *testing.B) { benchParse(b, contents(needCorpus(b).typical())) })
	b.Run("oracle", func(b *testing.B) { benchParse(b, contents(needCorpus(b).named(b, largest))) })
	large, _ := largeRobots()
	b.Run("rules20k", func(b *testing.B) { benchParse(b, [][]byte{large}) })
	wild, _ := wildRobots()
	b.Run("wild20k", func(b *testing.B) { benchParse(b, [][]byte{wild}) })
}

// tinyRobots is the smallest file that still decides something: one
// group, a Disallow and an Allow, the per-file cost of a parse with next
// to nothing to read.
var tinyRobots = []byte("User-agent: *\nDisallow: /private/\nAllow: /private/public\n")

// BenchmarkFirst is what a broad crawl pays for an origin it meets once:
// per operation, every file of the set is parsed and decided once, for
// agent on "/", the method the fastest published parser is measured by.
// Time per file is that per operation over the files of the set.
func BenchmarkFirst(b *testing.B) {
	b.Run("corpus", func(b *testing.B) { benchFirst(b, contents(needCorpus(b).files)) })
	b.Run("typical", func(b *testing.B) { benchFirst(b, contents(needCorpus(b).typical())) })
}

func benchFirst(b *testing.B, files [][]byte) {
	var size int64
	for _, f := range files {
		size += int64(len(f))
	}
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(size)
		allowed := 0
		for b.Loop() {
			for _, f := range files {
				if policy.Parse(f).Allowed("/", agent) {
					allowed++
				}
			}
		}
		sinkCount = allowed
	})
	b.Run("peer", func(b *testing.B) {
		b.SetBytes(size)
		allowed := 0
		for b.Loop() {
			for _, f := range files {
				r, err := robotstxt.FromBytes(f)
				if err != nil {
					b.Fatal(err)
				}
				if r.TestAgent("/", agent) {
					allowed++
				}
			}
		}
		sinkCount = allowed
	})
}

// heldPerFile parses every file with parse, keeping the results, and
// returns the bytes of heap they hold, per file and per byte of the files,
// after a collection. Each parsed file makes one decision first, so that
// what a library builds on a file's first use is counted too. Small sets
// are parsed several times over, about 1 MiB in all, so that the
// runtime's own small changes to the heap weigh little.
func heldPerFile(files [][]byte, parse func([]byte) any) (perFile, perByte float64) {
	size := 0
	for _, f := range files {
		size += len(f)
	}
	copies := 1 + (1<<20)/size
	all := make([][]byte, 0, copies*len(files))
	for range copies {
		all = append(all, files...)
	}
	files, size = all, copies*size
	kept := make([]any, len(files))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, f := range files {
		kept[i] = parse(f)
	}
	// Two collections, here and before: the first moves what sync.Pools
	// hold (scratch space of a parser, not any file's) to their victim
	// cache, the second frees it, so that neither count holds it.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	return held / float64(len(files)), held / float64(size)
}

// reportHeld reports heldPerFile as the metrics heldB/file and held/byte.
func reportHeld(b *testing.B, files [][]byte, parse func([]byte) any) {
	perFile, perByte := heldPerFile(files, parse)
	b.ReportMetric(perFile, "heldB/file")
	b.ReportMetric(perByte, "held/byte")
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
	// The held memory is measured after the timed loop, since the loop
	// resets the reported metrics.
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, f := range files {
				sinkOurs = policy.Parse(f)
			}
		}
		reportHeld(b, files, func(f []byte) any {
			r := policy.Parse(f)
			r.Allowed("/", agent)
			return r
		})
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
		reportHeld(b, files, func(f []byte) any {
			r, err := robotstxt.FromBytes(f)
			if err != nil {
				b.Fatal(err)
			}
			r.TestAgent("/", agent)
			return r
		})
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
	b.Run("oracle", func(b *testing.B) {
		c := needCorpus(b)
		benchDecide(b, contents(c.named(b, largest)), c.urls, 0)
	})
	large, paths := largeRobots()
	b.Run("rules20k", func(b *testing.B) { benchDecide(b, [][]byte{large}, paths, 0) })
	wild, wildPaths := wildRobots()
	b.Run("wild20k", func(b *testing.B) { benchDecide(b, [][]byte{wild}, wildPaths, 0) })
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
