package explorer

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crawlkit/robots/policy"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFetch fetches a live robots.txt from a local site through the
// project's fetcher and checks the outcome its status code leads to (RFC
// 9309 section 2.3.1) and the text handed to the page.
func TestFetch(t *testing.T) {
	big := "User-agent: *\nDisallow: /a\n" + strings.Repeat("# filler line\n", policy.MaxSize/14+100)
	tests := []struct {
		name      string
		site      http.HandlerFunc
		path      string // what is typed after the site's origin
		outcome   string
		status    int
		robots    string // the text the page gets, exactly
		warnings  int
		truncated bool
	}{
		{"2xx is parsed", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.Write([]byte(shop))
			}
		}, "", "parsed", 200, shop, 1, false},
		{"path of the origin is ignored", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.Write([]byte(shop))
			}
		}, "/some/page?q=1", "parsed", 200, shop, 1, false},
		{"gzip body is decoded", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped(t, shop))
		}, "", "parsed", 200, shop, 1, false},
		{"redirect is followed to the text", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "/moved.txt", http.StatusMovedPermanently)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /moved\n"))
		}, "", "parsed", 200, "User-agent: *\nDisallow: /moved\n", 0, false},
		{"over 500 KiB is cut at a line end", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(big))
		}, "", "parsed", 200, string(policy.Truncate([]byte(big), policy.MaxSize)), 0, true},
		{"4xx is unavailable", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, "", "unavailable", 404, "", 0, false},
		{"5xx is unreachable", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusInternalServerError)
		}, "", "unreachable", 500, "", 0, false},
		{"429 is unreachable", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, "", "unreachable", 429, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := httptest.NewServer(tt.site)
			t.Cleanup(site.Close)
			srv := newServer(t, Options{Transport: site.Client().Transport})
			var got fetchResponse
			if status := post(t, srv, "/api/fetch", mustJSON(t, map[string]string{"origin": site.URL + tt.path}), &got); status != http.StatusOK {
				t.Fatalf("status = %d, want 200", status)
			}
			if got.URL != site.URL+"/robots.txt" || got.Outcome != tt.outcome || got.StatusCode != tt.status {
				t.Errorf("got %s: %s %d, want %s/robots.txt: %s %d", got.URL, got.Outcome, got.StatusCode, site.URL, tt.outcome, tt.status)
			}
			if got.Robots != tt.robots || got.Truncated != tt.truncated || len(got.Warnings) != tt.warnings {
				t.Errorf("got %d bytes of text (truncated %v) with %d warnings, want %d (truncated %v) with %d",
					len(got.Robots), got.Truncated, len(got.Warnings), len(tt.robots), tt.truncated, tt.warnings)
			}
			if got.FetchedAt.IsZero() {
				t.Error("no fetch time")
			}
			if unreachable := tt.outcome == "unreachable"; unreachable == got.RetryAt.IsZero() || unreachable == (got.FetchError == "") {
				t.Errorf("retryAt %v, fetchError %q: want both set only when unreachable", got.RetryAt, got.FetchError)
			}
		})
	}
}

func TestFetchUnreachableHost(t *testing.T) {
	site := httptest.NewServer(http.NotFoundHandler())
	addr := site.Listener.Addr().String()
	site.Close() // nothing listens there now
	srv := newServer(t, Options{})
	var got fetchResponse
	if status := post(t, srv, "/api/fetch", mustJSON(t, map[string]string{"origin": "http://" + addr}), &got); status != http.StatusOK {
		t.Fatalf("status = %d, want 200", status)
	}
	if got.Outcome != "unreachable" || got.StatusCode != 0 || got.FetchError == "" {
		t.Errorf("got %s %d %q, want unreachable with no status and an error", got.Outcome, got.StatusCode, got.FetchError)
	}
}

func TestFetchBadOrigin(t *testing.T) {
	srv := newServer(t, Options{})
	tests := []struct {
		name, origin, want string
	}{
		{"empty", "", `origin "": give an http(s) origin`},
		{"other scheme", "ftp://example.com", `origin "ftp://example.com"`},
		{"no host", "http://", `origin "http://"`},
		{"user info", "https://user:pw@example.com", "give an http(s) origin"},
		{"invalid port", "http://example.com:99999", "invalid port"},
		{"over-long", "https://example.com/" + strings.Repeat("a", MaxURLLen), "the limit is 8 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got errorResponse
			if status := post(t, srv, "/api/fetch", mustJSON(t, map[string]string{"origin": tt.origin}), &got); status != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", status)
			}
			if !strings.Contains(got.Error, tt.want) {
				t.Errorf("error = %q, want %q", got.Error, tt.want)
			}
		})
	}
}

func TestFetchUserAgent(t *testing.T) {
	tests := []struct {
		name, option, want string
	}{
		{"zero option sends the default", "", DefaultUserAgent},
		{"option is sent", "ExampleBot/1.0 (+https://example.com/bot)", "ExampleBot/1.0 (+https://example.com/bot)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := make(chan string, 1)
			site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case seen <- r.Header.Get("User-Agent"):
				default:
				}
			}))
			t.Cleanup(site.Close)
			srv := newServer(t, Options{UserAgent: tt.option})
			var got fetchResponse
			post(t, srv, "/api/fetch", mustJSON(t, map[string]string{"origin": site.URL}), &got)
			select {
			case ua := <-seen:
				if ua != tt.want {
					t.Errorf("User-Agent %q, want %q", ua, tt.want)
				}
			default:
				t.Errorf("the site got no request; answer %+v", got)
			}
		})
	}
}
