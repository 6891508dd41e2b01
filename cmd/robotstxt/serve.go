package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/crawlkit/robots/internal/explorer"
)

// runServe runs "robotstxt serve": the explorer page on a local address
// until interrupted.
func runServe(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", "127.0.0.1:8080", "address to listen on; loopback unless told otherwise")
	file := fl.String("robots", "", "robots.txt `FILE` the page starts with")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: robotstxt serve [-addr HOST:PORT] [-robots FILE]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "robotstxt serve: unexpected argument %q\n", fl.Arg(0))
		fl.Usage()
		return 2
	}
	var opts explorer.Options
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(stderr, "robotstxt serve: %v\n", err)
			return 1
		}
		opts.Robots, opts.Source = string(data), *file
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "robotstxt serve: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stdout, "robotstxt explorer listening on http://%s/\n", ln.Addr())
	if err := serve(ctx, ln, explorer.New(opts)); err != nil {
		fmt.Fprintf(stderr, "robotstxt serve: %v\n", err)
		return 1
	}
	return 0
}

// serve serves h on ln until ctx is done, then shuts down gracefully.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
