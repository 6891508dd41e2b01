// Package explorer serves the robots.txt explorer: one page where a person
// edits a robots.txt, sees its warnings by line, and sees for each URL which
// rule, on which line, allows or refuses it. The page talks to a small JSON
// API on the same handler whose shapes are those of the robotstxt command's
// -json output (package report).
package explorer

import (
	"embed"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Options configures the explorer. The zero value serves an empty editor.
type Options struct {
	// Robots is the robots.txt the page starts with. If empty, the page
	// starts with an example.
	Robots string
	// Source names where Robots came from, such as a file name, for the page
	// to show. If empty, none is shown.
	Source string
}

// New returns the explorer's handler: the page at "/", its assets under
// "/assets/", and the JSON API under "/api/".
func New(opts Options) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.FileServerFS(assets))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, assets, "assets/index.html")
	})
	return mux
}
