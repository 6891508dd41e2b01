// Package bench compares the speed of github.com/crawlkit/robots with
// that of github.com/temoto/robotstxt, the most used Go robots.txt
// library, on the module's corpus of real robots.txt files and on two
// generated worst cases, and measures what robots.Transport adds to a
// request against a stub base round-tripper.
//
// It is its own module so that the peer library never enters the
// dependencies of github.com/crawlkit/robots. The package holds only
// tests and benchmarks; README.md shows the command that runs them and the
// latest results, and cmd/benchtable turns the benchmark output into the
// tables there.
package bench
