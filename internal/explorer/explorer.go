// Package explorer serves the robots.txt explorer: one page where a person
// edits a robots.txt, sees its warnings by line, and sees for each URL which
// rule, on which line, allows or refuses it. The page talks to a small JSON
// API on the same handler whose shapes are those of the robotstxt command's
// -json output (package report):
//
//	GET  /api/start   the robots.txt, product tokens and URLs the page starts with
//	POST /api/decide  {"robots", "agents", "urls"}: a decision per URL, with the file's warnings and groups
//	POST /api/lint    {"robots"}: the file's warnings and groups
//	POST /api/fetch   {"origin"}: a live robots.txt through the project's fetcher, with its outcome
//	POST /api/compare {"old", "new", "agents", "urls"}: every URL whose decision changes between two files
//
// "agent", the robotstxt command's spelling, is accepted for "agents": a
// token, a comma-separated list or a list. An unknown field is refused
// with the names the endpoint takes.
//
// Every error is answered with a 4xx status and {"error": "..."}, never a
// 500: malformed JSON or no product token with 400, a request whose Host
// header is not the address the server listens on with 403 (see
// guardHost), an unknown path with 404, a wrong method with 405, a
// robots.txt over 500 KiB or a body over MaxBody with 413, a body not sent
// as application/json with 415. A URL that is neither a path nor an
// http(s) URL is no error of the request: its decision carries the error,
// and the other URLs are decided.
package explorer

import (
	"cmp"
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"unicode/utf8"
)

//go:embed assets
var assets embed.FS

// Options configures the explorer. The zero value starts the page with an
// example.
type Options struct {
	// Robots is the robots.txt the page starts with. If it and Source are
	// empty, the page starts with an example file, product token and URLs.
	Robots string
	// Source names where Robots came from, such as a file name, for the page
	// to show. If empty, none is shown.
	Source string
	// UserAgent is sent with live robots.txt fetches. If empty,
	// DefaultUserAgent is used.
	UserAgent string
	// Transport carries live robots.txt fetches, under the project's
	// fetcher. If nil, http.DefaultTransport is used.
	Transport http.RoundTripper
}

// handler serves the page and its API. It is safe for concurrent use.
type handler struct {
	start     startResponse
	userAgent string
	transport http.RoundTripper
	// raw is Options.Robots when the page cannot hold it as it is: not
	// UTF-8 (start.Robots shows each byte that is not as U+FFFD, as
	// JSON does) or with CRs (which a textarea gives back as LFs). A
	// file sent back as shown, or as the page gives it back (lf), is
	// decided on its own bytes, as crawlers read them.
	raw, lf string
}

// startResponse is the answer to GET /api/start.
type startResponse struct {
	Robots string   `json:"robots"`
	Source string   `json:"source,omitempty"`
	Agents []string `json:"agents"`
	URLs   []string `json:"urls"`
}

// New returns the explorer's handler: the page at "/", its assets under
// "/assets/", and the JSON API under "/api/".
func New(opts Options) http.Handler {
	h := &handler{
		start: startResponse{
			Robots: opts.Robots,
			Source: opts.Source,
			Agents: []string{"Googlebot"},
			URLs:   []string{"/"},
		},
		userAgent: cmp.Or(opts.UserAgent, DefaultUserAgent),
		transport: opts.Transport,
	}
	if h.transport == nil {
		h.transport = http.DefaultTransport
	}
	if !utf8.ValidString(opts.Robots) || strings.Contains(opts.Robots, "\r") {
		h.raw, h.start.Robots = opts.Robots, shown(opts.Robots)
		h.lf = strings.ReplaceAll(strings.ReplaceAll(h.start.Robots, "\r\n", "\n"), "\r", "\n")
	}
	if opts.Robots == "" && opts.Source == "" {
		example, _ := assets.ReadFile("assets/example.txt") // part of the build
		h.start = startResponse{
			Robots: string(example),
			Source: "example",
			Agents: []string{"Googlebot"},
			URLs: []string{
				"/private/report.html",
				"/private/press-kit/logo.png",
				"https://shop.example/docs/manual.pdf",
				"/tmp/cache",
				"/cart",
			},
		}
	}
	// The patterns name no method, so that a wrong one gets the API's JSON
	// 405 from only rather than the mux's plain text.
	mux := http.NewServeMux()
	mux.Handle("/assets/{file}", only(http.MethodGet, http.HandlerFunc(serveAsset)))
	mux.Handle("/{$}", only(http.MethodGet, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, assets, "assets/index.html")
	})))
	mux.Handle("/api/start", only(http.MethodGet, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, h.start)
	})))
	mux.Handle("/api/decide", only(http.MethodPost, http.HandlerFunc(h.decide)))
	mux.Handle("/api/lint", only(http.MethodPost, http.HandlerFunc(h.lint)))
	mux.Handle("/api/fetch", only(http.MethodPost, http.HandlerFunc(h.fetch)))
	mux.Handle("/api/compare", only(http.MethodPost, http.HandlerFunc(h.compare)))
	mux.HandleFunc("/", notFound)
	return guardHost(mux)
}

// shown returns robots as the page shows it: each byte that is not
// valid UTF-8 as U+FFFD, as JSON carries it.
func shown(robots string) string {
	var b strings.Builder
	b.Grow(len(robots))
	for _, r := range robots {
		b.WriteRune(r) // a byte that is not UTF-8 ranges as utf8.RuneError
	}
	return b.String()
}

// robotsOf returns the robots.txt a request sent as text: the start
// file's own bytes when text is that file as the page shows it, or as
// its textarea gives it back.
func (h *handler) robotsOf(text string) string {
	if h.raw != "" && (text == h.start.Robots || text == h.lf) {
		return h.raw
	}
	return text
}

// only serves h for method (GET includes HEAD) and answers any other
// method with 405.
func only(method string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method)
			writeError(w, &apiError{http.StatusMethodNotAllowed, "method " + r.Method + " not allowed on " + r.URL.Path + ": use " + method})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// serveAsset serves one file of the page's assets; a missing one, or a
// folder, is the API's 404.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := "assets/" + r.PathValue("file")
	if st, err := fs.Stat(assets, name); err != nil || st.IsDir() {
		notFound(w, r)
		return
	}
	http.ServeFileFS(w, r, assets, name)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, &apiError{http.StatusNotFound, "no page at " + r.URL.Path})
}
