package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/crawlkit/robots/internal/explorer"
	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

const serveSynopsis = "usage: robotstxt serve [-addr HOST:PORT] [-robots FILE]\n"

const serveHelp = `Serve runs the explorer until interrupted: a page where you edit a
robots.txt, name your crawler and list URLs, and see for each URL whether
it may be fetched, the rule that decides it and that rule's line in the
file. It binds to loopback unless -addr says otherwise. Open the page at
the address it prints: a request naming another host (a DNS name other
than localhost) is refused, so that no web site can reach the page by
re-pointing its own name at this machine (DNS rebinding).

Exit status: 0 after an interrupt, 1 when the server cannot listen or
fails, 2 for bad usage or a file that cannot be read.
`

// Timeouts of the explorer's server. Writing allows for a live robots.txt
// fetch, which the fetcher bounds at robots.DefaultFetchTimeout.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 90 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 5 * time.Second
)

// runServe runs "robotstxt serve" until an interrupt or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveUntil(ctx, args, stdout, stderr)
}

// serveUntil runs "robotstxt serve" until ctx is done.
func serveUntil(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := newCommand("serve", serveSynopsis, serveHelp, stdout, stderr)
	addr := cmd.fl.String("addr", "127.0.0.1:8080", "`HOST:PORT` to listen on")
	file := cmd.fl.String("robots", "", "robots.txt `FILE` the page starts with (default: an example)")
	rest, status, done := cmd.parse(args)
	switch {
	case done:
		return status
	case len(rest) > 0:
		return cmd.usageError("unexpected argument %q", rest[0])
	}
	var opts explorer.Options
	if *file != "" {
		text, err := readForPage(*file, os.Stdin, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "robotstxt serve: %v\n", err)
			return 2
		}
		opts.Robots, opts.Source = string(text), *file
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "robotstxt serve: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "robotstxt explorer listening on http://%s/\n", pageAddr(ln.Addr(), stderr))
	if err := serve(ctx, ln, explorer.New(opts)); err != nil {
		fmt.Fprintf(stderr, "robotstxt serve: %v\n", err)
		return 1
	}
	return 0
}

// readForPage reads the robots.txt file name ("-" for stdin) for the page
// to start with: the whole file, up to explorer.MaxRobots, so that the
// page shows where crawlers stop reading it and what they never read,
// which it says on stderr too.
func readForPage(name string, stdin io.Reader, stderr io.Writer) ([]byte, error) {
	text, over, err := readUpTo(name, stdin, explorer.MaxRobots)
	if err != nil {
		return nil, err
	}
	if over {
		fmt.Fprintf(stderr, "robotstxt serve: warning: %s is over %d KiB: the page starts with its first %d KiB, up to the last whole line\n",
			name, explorer.MaxRobots>>10, explorer.MaxRobots>>10)
	}
	if !utf8.Valid(text) {
		fmt.Fprintf(stderr, "robotstxt serve: warning: %s is not UTF-8: the page shows each byte that is not as \uFFFD, and decides on the file's own bytes until it is edited\n", name)
	}
	if read, cut := report.Crawled(text); cut {
		from := policy.Parse(read).Lines() + 1
		fmt.Fprintf(stderr, "robotstxt serve: warning: %s:%d: %s; the page shows the whole file and marks the lines they never read, from line %d on\n",
			name, from, report.CutMessage, from)
	}
	return text, nil
}

// pageAddr returns the host and port to open the page at, warning on
// stderr when other machines can reach it: the page fetches any origin it
// is given, from this machine.
func pageAddr(addr net.Addr, stderr io.Writer) string {
	a, ok := addr.(*net.TCPAddr)
	if !ok || a.IP.IsLoopback() {
		return addr.String()
	}
	fmt.Fprintf(stderr, "robotstxt serve: warning: listening on %s, reachable from other machines: whoever reaches the page can make this machine fetch robots.txt files\n", addr)
	if a.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", strconv.Itoa(a.Port))
	}
	return addr.String()
}

// serve serves h on ln until ctx is done, then lets requests in flight
// finish for shutdownTimeout before closing what is left.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
