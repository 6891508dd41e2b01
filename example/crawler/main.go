// Command crawler is a small breadth-first crawler whose http.Client obeys
// robots.txt through robots.Transport. It prints, for every URL, whether
// it was fetched or refused and by which rule on which line, then a
// summary.
//
// With no arguments it serves an embedded demo site on the loopback
// interface and crawls that, so it works without a network:
//
//	go run ./example/crawler
//
// The demo site's robots.txt is in example/crawler/site/robots.txt. To
// crawl a real site, at most -max URLs of it:
//
//	go run ./example/crawler -url https://example.com/ -max 20
//
// Given a key, it signs every request it sends, robots.txt fetches and
// redirect hops included, with Web Bot Auth (package botauth), so that
// sites can verify who is crawling:
//
//	go run ./example/crawler -sign-key key.pem \
//		-sign-agent https://crawler.example/.well-known/http-message-signatures-directory
//
// Usage:
//
//	crawler [-url URL] [-max N] [-agent USER-AGENT] [-sign-key FILE [-sign-agent URL]]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/crawlkit/robots/botauth"
	"github.com/crawlkit/robots/policy"
)

// demoAgent is the crawler's User-Agent; its product token, DemoBot, is
// the name the demo site's robots.txt gives it a group under.
const demoAgent = "DemoBot/1.0 (+http://127.0.0.1/bot)"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr})
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(usageError)):
		os.Exit(2) // the flag package has printed the error and usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "crawler:", err)
		os.Exit(1)
	}
}

// env is what run takes from its surroundings, so that a test can run it
// on a clock of its own.
type env struct {
	stdout, stderr io.Writer
	// now and sleep are robots.Options.Now and Sleep. If nil, real time
	// is used.
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

// usageError is a command line that could not be used.
type usageError struct{ error }

// run crawls the site that args name, or the demo site without -url.
func run(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: crawler [-url URL] [-max N] [-agent USER-AGENT] [-sign-key FILE [-sign-agent URL]]\n\n"+
			"Crawls a site through robots.Transport, printing for every URL whether\n"+
			"robots.txt let it be fetched. Without -url it crawls a demo site that\n"+
			"it serves itself on 127.0.0.1, so no network is needed.\n\n")
		fs.PrintDefaults()
	}
	rawURL := fs.String("url", "", "crawl this http or https `URL` and its origin instead of the demo site")
	maxURLs := fs.Int("max", 50, "visit at most `N` URLs")
	agent := fs.String("agent", demoAgent, "send this `User-Agent`; its leading product token selects the robots.txt group")
	signKey := fs.String("sign-key", "", "sign every request with Web Bot Auth using the Ed25519 key in `FILE` (PKCS #8 PEM or JWK)")
	signAgent := fs.String("sign-agent", "", "with -sign-key: the https `URL` of the crawler's key directory, sent in Signature-Agent")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	usage := func(format string, args ...any) error {
		err := fmt.Errorf(format, args...)
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
		return usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q: the site to crawl is given with -url", fs.Arg(0))
	case *maxURLs < 1:
		return usage("-max must be at least 1, not %d", *maxURLs)
	case policy.ProductToken(*agent) == "":
		return usage("-agent %q does not start with a product token (letters, digits, '-' or '_'), which robots.txt groups are matched against", *agent)
	case *signAgent != "" && *signKey == "":
		return usage("-sign-agent names the key directory of -sign-key, which is missing")
	}
	if e.now == nil {
		e.now = time.Now
	}
	cfg := config{max: *maxURLs, agent: *agent, now: e.now, sleep: e.sleep}
	if *signKey != "" {
		signer, key, err := newSigner(*signKey, *signAgent, e.now)
		if err != nil {
			return usage("-sign-key: %v", err)
		}
		cfg.base = signer
		fmt.Fprintf(e.stdout, "Signing every request with Web Bot Auth: key %s, key directory %q.\n\n", key.Thumbprint(), *signAgent)
	}
	if *rawURL != "" {
		u, err := url.Parse(*rawURL)
		if err != nil || originOf(u) == "" {
			return usage("-url %q: want an absolute http or https URL with a valid host and port, such as https://example.com/", *rawURL)
		}
		cfg.start = u
		out := newReport(e.stdout, e.now)
		out.printf("Crawling %s as %q, at most %d URLs.\n\n", u, *agent, *maxURLs)
		return newCrawler(cfg, out).run(ctx)
	}
	return demo(ctx, cfg, e.stdout)
}

// newSigner returns the Web Bot Auth signer for the key in file, naming
// agent as its key directory.
func newSigner(file, agent string, now func() time.Time) (*botauth.Transport, botauth.Key, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, botauth.Key{}, err
	}
	key, err := botauth.ParseKey(data)
	if err != nil {
		return nil, botauth.Key{}, err
	}
	signer, err := botauth.NewTransport(http.DefaultTransport, botauth.Options{Keys: []botauth.Key{key}, Agent: agent, Now: now})
	return signer, key, err
}

// demo serves the embedded site on a loopback port and crawls it, then
// shows from the server's side that no refused URL reached it.
func demo(ctx context.Context, cfg config, stdout io.Writer) error {
	site := new(demoSite)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo site: %w", err)
	}
	srv := &http.Server{Handler: site, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	cfg.start = &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}
	// The demo site is local and ours: its Crawl-delay alone paces the
	// crawl. A crawler of real sites keeps robots.DefaultMinDelay.
	cfg.minDelay = -1
	out := newReport(stdout, cfg.now)
	out.printf("Demo: %s crawls a site served on %s through\n"+
		"robots.Transport. The site's files, robots.txt included, are in\n"+
		"example/crawler/site/.\n\n", policy.ProductToken(cfg.agent), cfg.start)
	if err := newCrawler(cfg, out).run(ctx); err != nil {
		return err
	}

	hits := site.requests()
	var leaked []string
	for _, f := range out.refusals {
		if slices.Contains(hits, f.uri) {
			leaked = append(leaked, f.uri)
		}
	}
	if len(leaked) > 0 {
		return fmt.Errorf("the demo site was sent refused URLs: %q", leaked)
	}
	out.printf("\nThe demo site received %s, %d of them for robots.txt, and none\n"+
		"for a refused URL: a refused request never leaves the client.\n",
		plural(len(hits), "request"), count(hits, "/robots.txt"))
	return nil
}

// count returns how many times s occurs in list.
func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
