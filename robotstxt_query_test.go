package robots_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

// TestRobotsTxtWhateverTheQuery checks that the transport, like the
// policy, lets a request for /robots.txt through on its normalised path
// whatever its query (RFC 9309 section 2.2.2 and docs/matching.md), even when the rules refuse everything or
// the robots.txt is unreachable and every other request is refused.
func TestRobotsTxtWhateverTheQuery(t *testing.T) {
	tests := []struct {
		name   string
		status int // of /robots.txt when fetched without a query
		body   string
	}{
		{"rules refuse everything", http.StatusOK, "User-agent: *\nDisallow: /\n"},
		{"robots.txt unreachable", http.StatusServiceUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" && r.URL.RawQuery == "" {
					w.WriteHeader(tt.status)
				}
				io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			tr := robots.NewTransport(srv.Client().Transport, robots.Options{UserAgent: "QueryBot/1.0", MinDelay: -1})
			client := &http.Client{Transport: tr}
			for _, uri := range []string{"/robots.txt?x=1", "/%72obots.txt?x=1", "/robots.txt"} {
				if !policy.Parse([]byte(tt.body)).Allowed(uri, "QueryBot") {
					t.Errorf("policy refuses %s", uri)
				}
				if err := tr.Check(context.Background(), srv.URL+uri); err != nil {
					t.Errorf("Check(%s) = %v, want nil", uri, err)
				}
				resp, err := client.Get(srv.URL + uri)
				if err != nil {
					t.Errorf("GET %s: %v", uri, err)
					continue
				}
				resp.Body.Close()
			}
			if _, err := client.Get(srv.URL + "/robots.txt/x"); !errors.Is(err, robots.ErrDisallowed) {
				t.Errorf("GET /robots.txt/x: %v, want ErrDisallowed", err)
			}
		})
	}
}
