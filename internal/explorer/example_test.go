package explorer_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/crawlkit/robots/internal/explorer"
	"github.com/crawlkit/robots/internal/report"
)

// The page asks POST /api/decide for a decision per URL as the person
// types; any client can.
func ExampleNew() {
	srv := httptest.NewServer(explorer.New(explorer.Options{}))
	defer srv.Close()

	body := `{"robots": "User-agent: *\nDisallow: /private\nAllow: /private/press\n",
		"agents": ["ExampleBot"], "urls": ["/private/x", "https://example.com/private/press/kit", "/about"]}`
	resp, err := http.Post(srv.URL+"/api/decide", "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Decisions []report.Decision `json:"decisions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		log.Fatal(err)
	}
	for _, d := range out.Decisions {
		fmt.Println(d.URL, "→", d.Reason)
	}
	// Output:
	// /private/x → disallowed by Disallow: /private (line 2)
	// https://example.com/private/press/kit → allowed by Allow: /private/press (line 3)
	// /about → allowed: no rule matched
}
