package explorer

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/crawlkit/robots/internal/diff"
)

// compareRequest is the body of POST /api/compare: the robots.txt in
// force and the one about to replace it.
type compareRequest struct {
	Old string `json:"old"`
	New string `json:"new"`
	// Agents are the crawlers to compare, each its product tokens, most
	// specific first, separated by commas ("Googlebot-Image,Googlebot").
	// If empty, every crawler either file names is compared, and "*".
	Agents []string `json:"agents"`
	// Agent is the robotstxt command's spelling of Agents.
	Agent agentField `json:"agent,omitempty"`
	// URLs are the URLs to compare. If empty, the paths the rules of both
	// files are written for are, with their neighbours (see diff.URLs).
	URLs []string `json:"urls"`
}

// Limits on a comparison, so that two large files answer in about a
// second with a page a browser can draw.
const (
	// maxCompared is the most decisions one comparison makes in each
	// file: URLs times crawlers.
	maxCompared = diff.MaxDecisions
	// maxChanges is the most changes an answer lists; More counts the
	// others.
	maxChanges = 1000
)

// compareResponse is the answer to POST /api/compare: each file's
// warnings and groups, and every URL whose decision changes, the first
// maxChanges of them listed.
type compareResponse struct {
	OldFile fileReport `json:"oldFile"`
	NewFile fileReport `json:"newFile"`
	diff.Result
	More int `json:"more,omitempty"` // changes left out of the list
}

func (h *handler) compare(w http.ResponseWriter, r *http.Request) {
	var req compareRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	old, err := parseRobots(h.robotsOf(req.Old))
	if err != nil {
		err.msg = "old " + err.msg
		writeError(w, err)
		return
	}
	nu, err := parseRobots(h.robotsOf(req.New))
	if err != nil {
		err.msg = "new " + err.msg
		writeError(w, err)
		return
	}
	if req.Agents, err = req.Agent.merge(req.Agents); err == nil {
		err = checkURLs(req.URLs)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	crawlers := make([][]string, 0, len(req.Agents))
	for _, a := range req.Agents {
		tokens := strings.Split(a, ",")
		for i := range tokens {
			tokens[i] = strings.TrimSpace(tokens[i])
		}
		if err := checkAgents(tokens); err != nil {
			writeError(w, err)
			return
		}
		crawlers = append(crawlers, tokens)
	}
	if len(crawlers) > MaxAgents {
		writeError(w, badRequest("%d crawlers; the limit is %d", len(crawlers), MaxAgents))
		return
	}
	if len(crawlers) == 0 {
		crawlers = diff.Agents(old.robots, nu.robots)
	}
	urls := req.URLs
	if len(urls) == 0 {
		urls = diff.URLs(old.robots, nu.robots)
	}
	if n := len(urls) * len(crawlers); n > maxCompared {
		writeError(w, badRequest("%d URLs for %d crawlers make %d decisions; the limit is %d: name the crawlers or the URLs to compare",
			len(urls), len(crawlers), n, maxCompared))
		return
	}
	resp := compareResponse{OldFile: describe(old), NewFile: describe(nu), Result: diff.Compare(old.robots, nu.robots, crawlers, urls)}
	if extra := len(resp.Changes) - maxChanges; extra > 0 {
		resp.Changes, resp.More = resp.Changes[:maxChanges], extra
	}
	writeJSON(w, http.StatusOK, resp)
}

// agentField is the "agent" field, the robotstxt command's spelling of
// "agents": one product token, a comma-separated list, or a JSON list.
type agentField []string

// UnmarshalJSON reads a string as a comma-separated list of tokens, and a
// list of strings as it is.
func (a *agentField) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		for _, t := range strings.Split(s, ",") {
			*a = append(*a, strings.TrimSpace(t))
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		return errors.New(`"agent" should be a product token, a comma-separated list of them, or a list of strings`)
	}
	*a = list
	return nil
}

// merge returns agents, or the tokens of a in their place; giving both is
// ambiguous and refused.
func (a agentField) merge(agents []string) ([]string, *apiError) {
	switch {
	case a == nil:
		return agents, nil
	case agents != nil:
		return nil, badRequest(`both "agents" and "agent": give one`)
	}
	return a, nil
}
