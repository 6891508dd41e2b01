// Command frontier shows a crawl frontier that schedules by
// robots.Transport.NextFree: it holds URLs by origin and hands a worker
// only a URL whose origin is free now, so that workers fetch instead of
// waiting for slots inside RoundTrip.
//
// It serves demo origins on the loopback interface (most paced at 100 ms,
// some at a Crawl-delay of 0.5 s, each page taking 20 ms) and crawls them
// twice with the same workers, URLs grouped by origin as a sitemap gives
// them: once through the frontier, once through a plain worker pool
// sharing one queue. It prints what share of the politeness limit each
// reached:
//
//	go run ./example/frontier
//
// Usage:
//
//	frontier [-workers N] [-span D] [-shuffled]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(os.Stderr, "frontier:", err)
		}
		os.Exit(2)
	}
}

// demoPlan is the crawl the demo runs: 100 origins, 90 at 100 ms and 10 at
// a Crawl-delay of 0.5 s, whose politeness limit is 920 requests a second.
func demoPlan() plan {
	return plan{
		fast: 90, slow: 10,
		fastDelay: 100 * time.Millisecond, slowDelay: 500 * time.Millisecond,
		page: 20 * time.Millisecond, span: 2 * time.Second, workers: 50,
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("frontier", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := demoPlan()
	fs.IntVar(&p.workers, "workers", p.workers, "crawl with `N` workers")
	fs.DurationVar(&p.span, "span", p.span, "give each origin the URLs its delay lets be sent in `D`")
	fs.BoolVar(&p.shuffled, "shuffled", false, "queue the URLs in random order rather than grouped by origin")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if p.workers < 1 || p.span < p.slowDelay || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("want -workers of at least 1, -span of at least %v and no arguments", p.slowDelay)
	}
	order := "grouped by origin"
	if p.shuffled {
		order = "shuffled"
	}
	fmt.Fprintf(stdout, "%d origins (%d at %v, %d at Crawl-delay %v), pages of %v, %d workers, URLs %s.\n",
		p.fast+p.slow, p.fast, p.fastDelay, p.slow, p.slowDelay, p.page, p.workers, order)
	for _, pool := range []bool{false, true} {
		p.pool = pool
		r, err := crawl(ctx, p)
		if err != nil {
			return err
		}
		name := "frontier   "
		if pool {
			name = "worker pool"
		}
		fmt.Fprintf(stdout, "%s  %v\n", name, r)
	}
	return nil
}
