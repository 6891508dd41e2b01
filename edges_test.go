package robots_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/crawlkit/robots"
)

// TestEscapedSlashDotSegmentsRefused checks, against Go's http.FileServer,
// which decodes "%2F" before it resolves dot segments, that a request whose
// dot segments appear only once "%2F" is decoded is refused when the file
// the server would serve for it is: first that the server does serve
// /private/secret.txt for each spelling, so that letting one through
// would leak it, then that the transport refuses each before it is sent.
func TestEscapedSlashDotSegmentsRefused(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{"public/index.html": "public page", "private/secret.txt": "the secret"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := http.FileServer(http.Dir(root))
	var pages atomic.Int64 // requests other than /robots.txt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		pages.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	get := func(c *http.Client, path string) (string, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", errors.New(resp.Status)
		}
		return string(body), err
	}
	client := &http.Client{Transport: robots.NewTransport(srv.Client().Transport, robots.Options{UserAgent: "EdgeBot/1.0", MinDelay: -1})}
	if body, err := get(client, "/public/index.html"); err != nil || body != "public page" {
		t.Fatalf("GET /public/index.html = %q, %v; want the public page", body, err)
	}
	for _, path := range []string{
		"/public/..%2fprivate/secret.txt",
		"/public/..%2Fprivate/secret.txt",
		"/public/%2e%2e%2Fprivate/secret.txt",
		"/public%2f..%2fprivate/secret.txt",
		"/public/..%2f%2fprivate/secret.txt",
	} {
		t.Run(path, func(t *testing.T) {
			if body, err := get(srv.Client(), path); err != nil || body != "the secret" {
				t.Fatalf("without the transport, GET %s = %q, %v; want the server to serve /private/secret.txt", path, body, err)
			}
			before := pages.Load()
			_, err := get(client, path)
			var refused *robots.DisallowedError
			if !errors.As(err, &refused) || refused.Rule == nil || refused.Rule.Line != 2 {
				t.Fatalf("through the transport, GET %s: err = %v; want refused by Disallow: /private (line 2)", path, err)
			}
			if refused.Resolved != "/private/secret.txt" {
				t.Errorf("Resolved = %q, want the form the server serves, /private/secret.txt", refused.Resolved)
			}
			if n := pages.Load() - before; n != 0 {
				t.Errorf("the refused request reached the server (%d requests)", n)
			}
		})
	}
}
