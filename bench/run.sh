#!/bin/sh
# run.sh runs the speed comparison and writes its table into README.md,
# keeping the raw go test output in bench.txt.
#
# Each round runs every benchmark once, rather than one benchmark six times
# in a row, so that ours and the peer are measured alternately and share
# whatever load the machine has at the time. ROUNDS overrides the six
# rounds; ROBOTS_CORPUS, the corpus directory. The "library:" line names the
# last commit of the measured packages, match and policy, with "+dirty"
# when the working tree changes them.
set -eu
cd "$(dirname "$0")"
rounds=${ROUNDS:-6}
{
	echo "date: $(date -u +%Y-%m-%d)"
	echo "cores: $(nproc)"
	library=$(git log -1 --format=%h -- ../match ../policy)
	git diff --quiet HEAD -- ../match ../policy || library="$library+dirty"
	echo "library: $library"
	round=0
	while [ "$round" -lt "$rounds" ]; do
		go test -run '^$' -bench '^Benchmark(Parse|Decide)$' -benchmem -count 1 -timeout 30m
		round=$((round + 1))
	done
} >bench.txt
go run ./cmd/benchtable -w README.md bench.txt
