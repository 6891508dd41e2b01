#!/bin/sh
# run.sh runs the speed comparison and the transport benchmarks and writes
# their tables into README.md, keeping the raw go test output in bench.txt.
#
# Each round runs every benchmark once, rather than one benchmark six times
# in a row, so that ours and the peer, and the transport at -cpu 1 and 2,
# are measured alternately and share whatever load the machine has at the
# time. ROUNDS overrides the six rounds; ROBOTS_CORPUS, the corpus
# directory. The "library:" line names the last commit of the packages the
# comparison measures, match and policy; the "transport:" line that of the
# packages the transport benchmarks measure, the root package with them.
# Either ends in "+dirty" when the working tree changes those packages.
set -eu
cd "$(dirname "$0")"
rounds=${ROUNDS:-6}

# commit prints the last commit of the given paths, marked when the working
# tree changes them.
commit() {
	c=$(git log -1 --format=%h -- "$@")
	git diff --quiet HEAD -- "$@" || c="$c+dirty"
	echo "$c"
}

{
	echo "date: $(date -u +%Y-%m-%d)"
	echo "cores: $(nproc)"
	echo "library: $(commit ../match ../policy)"
	echo "transport: $(commit ':(glob)../*.go' ../match ../policy)"
	round=0
	while [ "$round" -lt "$rounds" ]; do
		go test -run '^$' -bench '^Benchmark(Parse|First|Decide)$' -benchmem -count 1 -timeout 30m
		go test -run '^$' -bench '^BenchmarkTransport' -benchmem -count 1 -cpu 1,2 -timeout 30m
		round=$((round + 1))
	done
} >bench.txt
go run ./cmd/benchtable -w README.md bench.txt
