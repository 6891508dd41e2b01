package explorer

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/report"
)

// DefaultUserAgent is the User-Agent of the explorer's live fetches when
// Options.UserAgent is empty.
const DefaultUserAgent = "robotstxt-explorer (+https://github.com/crawlkit/robots)"

// fetchResponse is the answer to POST /api/fetch: what the project's
// fetcher made of the origin's robots.txt, with the text it parsed for the
// page's editor.
type fetchResponse struct {
	fileReport
	URL        string    `json:"url"` // the robots.txt asked for
	Origin     string    `json:"origin"`
	Outcome    string    `json:"outcome"`    // "parsed", "unavailable" or "unreachable"
	StatusCode int       `json:"statusCode"` // 0 when no answer arrived
	FetchedAt  time.Time `json:"fetchedAt"`
	Expires    time.Time `json:"expires,omitzero"` // parsed or unavailable: when it goes stale
	RetryAt    time.Time `json:"retryAt,omitzero"` // unreachable: when it is fetched again
	FetchError string    `json:"fetchError,omitempty"`
	Robots     string    `json:"robots"` // the text parsed, when parsed
	Truncated  bool      `json:"truncated,omitempty"`
}

// originURL reads what a person typed as an origin: an http(s) URL, whose
// path is ignored, or a bare host taken as https.
func originURL(s string) (*url.URL, *apiError) {
	if len(s) > MaxURLLen {
		return nil, badRequest("origin is %d bytes long; the limit is %d KiB", len(s), MaxURLLen>>10)
	}
	raw := strings.TrimSpace(s)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, badRequest("origin %q: give an http(s) origin such as https://example.com", s)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}, nil
}

func (h *handler) fetch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Origin string `json:"origin"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	target, apiErr := originURL(req.Origin)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	// A transport of its own for each fetch: the page shows what the site
	// serves now, not a copy cached by an earlier click.
	tr := robots.NewTransport(h.transport, robots.Options{UserAgent: h.userAgent})
	defer tr.CloseIdleConnections()
	info, err := tr.Robots(r.Context(), target.String())
	if err != nil {
		if r.Context().Err() != nil {
			return // the page went away; nobody reads an answer
		}
		writeError(w, badRequest("origin %q: %v", req.Origin, err))
		return
	}
	resp := fetchResponse{
		URL:        info.Origin + "/robots.txt",
		Origin:     info.Origin,
		Outcome:    info.Outcome.String(),
		StatusCode: info.StatusCode,
		FetchedAt:  info.FetchedAt,
		Expires:    info.Expires,
		RetryAt:    info.RetryAt,
		Truncated:  info.Truncated,
		fileReport: fileReport{Warnings: []report.Warning{}, Groups: []report.Group{}},
	}
	if info.Err != nil {
		resp.FetchError = info.Err.Error()
	}
	if info.Outcome == robots.Parsed && info.Policy != nil {
		resp.Robots = string(info.Body)
		resp.fileReport = describe(&parsed{robots: info.Policy})
	}
	writeJSON(w, http.StatusOK, resp)
}
