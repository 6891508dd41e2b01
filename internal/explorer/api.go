package explorer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

// Limits on what the API accepts. A robots.txt over policy.MaxSize is
// read whole, up to MaxRobots, rather than cut or refused: a person
// pasting it should see where crawlers stop reading it and what they
// never read (RFC 9309 section 2.5).
const (
	// MaxRobots is the largest robots.txt the API reads, in bytes: four
	// times what crawlers read, room for the largest real files.
	MaxRobots = 4 * policy.MaxSize
	// MaxURLLen is the longest URL the API decides, in bytes: longer than
	// any URL that servers and crawlers commonly accept.
	MaxURLLen = 8 << 10
	// MaxURLs is the most URLs one request may decide.
	MaxURLs = 1000
	// MaxAgents is the most product tokens one request may give.
	MaxAgents = 20
	// MaxAgentLen is the longest product token the API takes, in bytes.
	MaxAgentLen = 100
	// MaxBody is the largest request body, in bytes: room for the two
	// robots.txt files of a comparison, each of MaxRobots even with a
	// third of its bytes escaped in JSON as \u00XX (6 bytes), and for the
	// URLs, while still refusing a runaway upload early.
	MaxBody = 16 << 20
)

// decideRequest is the body of POST /api/decide.
type decideRequest struct {
	Robots string   `json:"robots"`
	Agents []string `json:"agents"`
	// Agent is the robotstxt command's spelling of Agents.
	Agent agentField `json:"agent,omitempty"`
	URLs  []string   `json:"urls"`
}

// fileReport is what the API says about a robots.txt file as a whole.
// Its warnings and groups are those of what crawlers read.
type fileReport struct {
	Lines    int              `json:"lines"` // the lines of the file sent
	Warnings []report.Warning `json:"warnings"`
	Groups   []report.Group   `json:"groups"`        // every group of the file
	Cut      *report.Cut      `json:"cut,omitempty"` // where crawlers stop reading it, if they do
}

// decideResponse is the answer to POST /api/decide. A URL that cannot be
// read has its Error set in its decision; the others are still decided.
type decideResponse struct {
	fileReport
	// Token is the product token whose groups apply: "*" for the fallback
	// groups, "" when none does.
	Token string `json:"token"`
	// Selected are the groups that apply to the agents, whatever the URL.
	Selected  []report.Group `json:"selected"`
	Decisions []decision     `json:"decisions"`
}

// decision is a URL's decision by what crawlers read of the file and,
// when the file is cut, what the part they never read would change.
type decision struct {
	report.Decision
	// PastCut says that the whole file would decide the URL by a rule
	// crawlers never read, or otherwise than they do; nil when the file
	// is not cut or the part past the cut changes nothing.
	PastCut *pastCut `json:"pastCut,omitempty"`
}

// pastCut is what the whole file, cut part included, decides.
type pastCut struct {
	Allowed bool         `json:"allowed"`
	Rule    *report.Rule `json:"rule,omitempty"` // nil when no rule matched
	Reason  string       `json:"reason"`         // a sentence saying so
}

// errorResponse is the body of every error answer.
type errorResponse struct {
	Error string `json:"error"`
}

// apiError is a request the API refuses, with the status to refuse it with.
type apiError struct {
	status int
	msg    string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// decodeJSON reads the JSON object in r's body into v, refusing anything
// but one object of known fields in a body of at most MaxBody bytes.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) *apiError {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		// Requiring JSON keeps other sites' plain form posts out: a
		// browser sends application/json cross-origin only after a
		// preflight, which this server never grants.
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &apiError{http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q: send application/json", ct)}
		}
	} else {
		return &apiError{http.StatusUnsupportedMediaType, "no content type: send application/json"}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err = dec.Token(); err == io.EOF {
			return nil
		} else if err == nil {
			err = errors.New("data after the JSON object")
		}
	}
	var (
		tooBig    *http.MaxBytesError
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooBig):
		return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d MiB", MaxBody>>20)}
	case errors.Is(err, io.EOF):
		return badRequest("malformed JSON: empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: it ends too early")
	case errors.As(err, &syntax):
		return badRequest("malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &wrongType):
		what := "the body"
		if wrongType.Field != "" {
			what = fmt.Sprintf("%q", wrongType.Field)
		}
		return badRequest("malformed JSON: %s should be %s, not %s", what, kindName(wrongType.Type), article(wrongType.Value))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		// Say what the endpoint takes, so that a caller guessing a name
		// learns the right one.
		return badRequest("malformed JSON: %s; %s takes %s", msg, r.URL.Path, fieldNames(v))
	}
	return badRequest("malformed JSON: %s", msg)
}

// fieldNames lists the JSON fields of the struct v points to: `"robots",
// "agents" (or "agent") and "urls"`. A field of type agentField is named
// as the spelling of the one before it.
func fieldNames(v any) string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous || name == "" || name == "-":
		case f.Type == reflect.TypeOf(agentField(nil)) && len(names) > 0:
			names[len(names)-1] += fmt.Sprintf(" (or %q)", name)
		default:
			names = append(names, fmt.Sprintf("%q", name))
		}
	}
	switch len(names) {
	case 0:
		return "no fields"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// article puts "a" or "an" before a JSON kind: "an array".
func article(kind string) string {
	if strings.IndexAny(kind, "aeiou") == 0 {
		return "an " + kind
	}
	return "a " + kind
}

// kindName names the JSON value that decodes into t.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(kindName(t.Elem()), "a ") + "s"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.Kind().String()
}

// parsed is a robots.txt sent to the API.
type parsed struct {
	robots *policy.Robots // what crawlers read of it
	whole  *policy.Robots // the whole file, when they do not read it all
	cut    *report.Cut    // where they stop reading; nil with whole
}

// parseRobots parses a robots.txt sent to the API as crawlers read it
// and, when they do not read it all, whole; it refuses one over
// MaxRobots.
func parseRobots(text string) (*parsed, *apiError) {
	if len(text) > MaxRobots {
		return nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"robots.txt is %d KiB; the explorer reads up to %d KiB, and crawlers only the first %d KiB (RFC 9309 section 2.5): cut it down",
			(len(text)+1023)>>10, MaxRobots>>10, policy.MaxSize>>10)}
	}
	read, cut := report.Crawled([]byte(text))
	p := &parsed{robots: policy.Parse(read)}
	if cut {
		p.whole = policy.Parse([]byte(text))
		p.cut = &report.Cut{Line: p.robots.Lines() + 1, Bytes: len(read), Lines: p.whole.Lines(), Size: len(text)}
	}
	return p, nil
}

func describe(p *parsed) fileReport {
	f := fileReport{Lines: p.robots.Lines(), Warnings: report.Warnings(p.robots), Groups: report.Groups(p.robots), Cut: p.cut}
	if p.cut != nil {
		// Every other warning lies on a line before the cut.
		f.Lines, f.Warnings = p.cut.Lines, append(f.Warnings, p.cut.Warning())
	}
	return f
}

// decide decides u for agents by what crawlers read of the file, and
// says what the part past the cut would change.
func (p *parsed) decide(u string, agents []string) decision {
	d := decision{Decision: report.Decide(p.robots, u, agents...)}
	if p.cut == nil || d.Error != "" {
		return d
	}
	w := report.Decide(p.whole, u, agents...)
	past := w.Rule != nil && w.Rule.Line >= p.cut.Line
	if !past && w.Allowed == d.Allowed {
		return d
	}
	d.PastCut = &pastCut{Allowed: w.Allowed, Rule: w.Rule}
	if past {
		d.PastCut.Reason = fmt.Sprintf("Line %d would decide it, but it lies past the %d KiB cut, and crawlers read nothing from line %d on. Read whole, the file says %s.",
			w.Rule.Line, policy.MaxSize>>10, p.cut.Line, w.Reason)
	} else {
		d.PastCut.Reason = fmt.Sprintf("Read whole, the file says %s: its groups past the %d KiB cut, from line %d on, which crawlers never read, change which rules apply.",
			w.Reason, policy.MaxSize>>10, p.cut.Line)
	}
	return d
}

// checkAgents refuses a request without product tokens, as decisions
// depend on the crawler, and tokens that no group could name: RFC 9309
// section 2.2.1 allows letters, "-" and "_", and the parser digits too.
func checkAgents(agents []string) *apiError {
	switch {
	case len(agents) == 0:
		return badRequest("no product token: give your crawler's, such as \"Googlebot\"; decisions depend on it")
	case len(agents) > MaxAgents:
		return badRequest("%d product tokens; the limit is %d", len(agents), MaxAgents)
	}
	for _, a := range agents {
		if a == "" || len(a) > MaxAgentLen || policy.ProductToken(a) != a {
			return badRequest("product token %q: use 1 to %d letters, digits, \"-\" and \"_\" (RFC 9309 section 2.2.1), such as \"Googlebot\"", a, MaxAgentLen)
		}
	}
	return nil
}

// checkURLs refuses too many or too long URLs before any is decided.
func checkURLs(urls []string) *apiError {
	if len(urls) > MaxURLs {
		return badRequest("%d URLs; the limit is %d", len(urls), MaxURLs)
	}
	for i, u := range urls {
		if len(u) > MaxURLLen {
			return badRequest("URL %d is %d bytes long; the limit is %d KiB", i+1, len(u), MaxURLLen>>10)
		}
	}
	return nil
}

func (h *handler) decide(w http.ResponseWriter, r *http.Request) {
	var req decideRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, err := parseRobots(h.robotsOf(req.Robots))
	if err == nil {
		req.Agents, err = req.Agent.merge(req.Agents)
	}
	if err == nil {
		err = checkAgents(req.Agents)
	}
	if err == nil {
		err = checkURLs(req.URLs)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	agent := p.robots.Agent(req.Agents...)
	resp := decideResponse{
		fileReport: describe(p),
		Token:      agent.Token(),
		Selected:   make([]report.Group, 0, len(agent.Groups())),
		Decisions:  make([]decision, 0, len(req.URLs)),
	}
	for _, gi := range agent.Groups() {
		resp.Selected = append(resp.Selected, resp.Groups[gi])
	}
	for _, u := range req.URLs {
		dec := p.decide(u, req.Agents)
		if dec.Error != "" {
			dec.Error = fmt.Sprintf("%q is neither a path (starting with \"/\") nor an http(s) URL", u)
			dec.Reason = dec.Error
		}
		resp.Decisions = append(resp.Decisions, dec)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *handler) lint(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Robots string `json:"robots"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, err := parseRobots(h.robotsOf(req.Robots))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, describe(p))
}

func writeError(w http.ResponseWriter, err *apiError) {
	writeJSON(w, err.status, errorResponse{Error: err.msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Every value sent is built from strings, numbers and slices, but
		// even this answer keeps the shape of the others.
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorResponse{Error: "explorer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
