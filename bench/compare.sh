#!/bin/sh
# compare.sh measures the benchmarks of bench/regress (a decision, a parse
# of the corpus, a request on a held origin and one on a new origin) on two
# checkouts of the module and prints them side by side: callgrind
# instructions per operation, and wall-clock medians of alternating rounds
# with benchstat's comparison.
#
#   bench/compare.sh [flags] OLD NEW
#
# OLD and NEW are the checkouts' root directories; both are built with this
# checkout's bench/regress laid over theirs, so the same benchmark code runs
# on each and neither is written to. It needs go, valgrind and benchstat
# (go install golang.org/x/perf/cmd/benchstat@latest). Flags, before the
# paths: -count (10 rounds), -benchtime (1s), -corpus, -out, -wall=false,
# -callgrind=false; cmd/compare's doc says more.
set -eu
here=$PWD
case $0 in */*) cd "${0%/*}" ;; esac
exec go run ./cmd/compare -wd "$here" "$@"
