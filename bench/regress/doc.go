// Package regress holds the benchmarks that cmd/compare (run by
// ../compare.sh) measures on two checkouts of the module, to tell whether
// one is slower than the other: a decision on a parsed corpus file, a
// parse of the whole corpus, a parse and one decision of each file (what
// an origin met once costs), the bare tokenizer that bounds a parse from
// below, and a request through the transport to an
// origin whose robots.txt it holds, beside the same request on the bare
// base round-tripper.
//
// They use only the exported API of github.com/crawlkit/robots and its
// policy package, so that the same file compiles on old and new trees:
// cmd/compare builds both with this directory's files laid over theirs
// (go test -overlay), so that the benchmarks compared are the same code.
// The corpus is read from the directory named by ROBOTS_CORPUS, by
// default the module's own testdata/robots-corpus.
package regress
