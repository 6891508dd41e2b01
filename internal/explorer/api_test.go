package explorer

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crawlkit/robots/internal/explorer/fixture"
	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

const shop = `User-agent: *
Disallow: /cart

User-agent: Googlebot
Disallow: /private/
Allow: /private/press
Dissallow: /tmp/
`

func newServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(opts))
	t.Cleanup(srv.Close)
	return srv
}

// post sends body as JSON to path and returns the status and the decoded
// answer.
func post(t *testing.T, srv *httptest.Server, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp := do(t, srv, req, out)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want JSON", ct)
	}
	return resp.StatusCode
}

// do sends req to srv and decodes its JSON answer into out.
func do(t *testing.T, srv *httptest.Server, req *http.Request, out any) *http.Response {
	t.Helper()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("decoding the answer: %v", err)
	}
	return resp
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecide(t *testing.T) {
	srv := newServer(t, Options{})
	body := mustJSON(t, decideRequest{
		Robots: shop,
		Agents: []string{"Googlebot-News", "Googlebot"},
		URLs:   []string{"/private/a", "https://shop.example/private/press/kit", "/cart", "/tmp/x"},
	})
	var got decideResponse
	if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK {
		t.Fatalf("status = %d, want 200", status)
	}
	if got.Lines != 7 || got.Token != "Googlebot" {
		t.Errorf("lines, token = %d, %q; want 7, Googlebot", got.Lines, got.Token)
	}
	wantSelected := []report.Group{{Agents: []string{"Googlebot"}, Line: 4, EndLine: 7}}
	if mustJSON(t, got.Selected) != mustJSON(t, wantSelected) {
		t.Errorf("selected = %+v, want %+v", got.Selected, wantSelected)
	}
	if len(got.Groups) != 2 || len(got.Warnings) != 1 || got.Warnings[0].Line != 7 {
		t.Errorf("groups = %+v, warnings = %+v; want 2 groups and a warning on line 7", got.Groups, got.Warnings)
	}
	rb := policy.Parse([]byte(shop))
	for i, u := range []string{"/private/a", "https://shop.example/private/press/kit", "/cart", "/tmp/x"} {
		// The API's decisions are the report's, shared with the CLI's -json.
		want := report.Decide(rb, u, "Googlebot-News", "Googlebot")
		if i >= len(got.Decisions) || mustJSON(t, got.Decisions[i]) != mustJSON(t, want) {
			t.Errorf("decision %d = %+v, want %+v", i, got.Decisions, want)
		}
	}
	wantLines := []int{5, 6, 0, 7} // /cart: no rule of the Googlebot group matches
	for i, d := range got.Decisions {
		line := 0
		if d.Rule != nil {
			line = d.Rule.Line
		}
		if line != wantLines[i] {
			t.Errorf("%s decided by line %d, want %d", d.URL, line, wantLines[i])
		}
	}
}

func TestDecideFallbackAndNoGroup(t *testing.T) {
	srv := newServer(t, Options{})
	tests := []struct {
		name, robots string
		agents       []string
		token        string
		selected     int
	}{
		{"star group applies when no group names the token", shop, []string{"Bingbot"}, "*", 1},
		{"no group applies without a matching or star group", "User-agent: a\nDisallow: /\n", []string{"b"}, "", 0},
		{"empty file has no group", "", []string{"b"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got decideResponse
			body := mustJSON(t, decideRequest{Robots: tt.robots, Agents: tt.agents, URLs: []string{"/"}})
			if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK {
				t.Fatalf("status = %d", status)
			}
			if got.Token != tt.token || len(got.Selected) != tt.selected || got.Selected == nil {
				t.Errorf("token %q, selected %v; want %q and %d groups", got.Token, got.Selected, tt.token, tt.selected)
			}
		})
	}
}

func TestLint(t *testing.T) {
	srv := newServer(t, Options{})
	var got fileReport
	if status := post(t, srv, "/api/lint", mustJSON(t, map[string]string{"robots": shop}), &got); status != http.StatusOK {
		t.Fatalf("status = %d", status)
	}
	rb := policy.Parse([]byte(shop))
	want := fileReport{Lines: rb.Lines(), Warnings: report.Warnings(rb), Groups: report.Groups(rb)}
	if mustJSON(t, got) != mustJSON(t, want) {
		t.Errorf("lint = %+v, want %+v", got, want)
	}
}

// TestBadInput checks that every kind of bad input gets a 4xx with a
// message that says what was wrong, never a 500.
func TestBadInput(t *testing.T) {
	srv := newServer(t, Options{})
	longURL := "/" + strings.Repeat("a", MaxURLLen)
	bot := []string{"ExampleBot"}
	tests := []struct {
		name        string
		path        string
		contentType string
		body        string
		status      int
		want        string // in the error message
	}{
		{"malformed JSON", "/api/decide", "application/json", `{"robots": "x",`, 400, "malformed JSON"},
		{"syntax error names its byte", "/api/decide", "application/json", `{"robots" "x"}`, 400, "at byte 11"},
		{"empty body", "/api/decide", "application/json", ``, 400, "empty body"},
		{"two JSON values", "/api/decide", "application/json", `{} {}`, 400, "after the JSON object"},
		{"unknown field names the fields taken", "/api/decide", "application/json", `{"agnets": ["x"]}`, 400,
			`unknown field "agnets"; /api/decide takes "robots", "agents" (or "agent") and "urls"`},
		{"agent and agents together are ambiguous", "/api/decide", "application/json", `{"agent": "x", "agents": ["y"]}`, 400, `both "agents" and "agent"`},
		{"agent of the wrong type", "/api/decide", "application/json", `{"agent": 1}`, 400, `"agent" should be a product token`},
		{"unknown field to compare", "/api/compare", "application/json", `{"robots": ""}`, 400,
			`/api/compare takes "old", "new", "agents" (or "agent") and "urls"`},
		{"bad crawler to compare", "/api/compare", "application/json", `{"agents": ["Googlebot/2.1"]}`, 400, `product token "Googlebot/2.1"`},
		{"old file over MaxRobots to compare", "/api/compare", "application/json",
			mustJSON(t, compareRequest{Old: strings.Repeat("#", MaxRobots+1)}), 413, "old robots.txt is 2001 KiB"},
		{"wrong type", "/api/decide", "application/json", `{"urls": "/a"}`, 400, `"urls" should be a list of strings, not a string`},
		{"not an object", "/api/lint", "application/json", `[1]`, 400, "the body should be an object, not an array"},
		{"file over MaxRobots", "/api/decide", "application/json",
			mustJSON(t, decideRequest{Robots: strings.Repeat("#\n", MaxRobots/2+1)}), 413, "the explorer reads up to 2000 KiB, and crawlers only the first 500 KiB"},
		{"file over MaxRobots to lint", "/api/lint", "application/json",
			mustJSON(t, map[string]string{"robots": strings.Repeat("#", MaxRobots+1)}), 413, "2001 KiB"},
		{"body over the limit", "/api/decide", "application/json",
			`{"robots": "` + strings.Repeat("#", MaxBody) + `"}`, 413, "request body over 16 MiB"},
		{"URL over 8 KiB", "/api/decide", "application/json",
			mustJSON(t, decideRequest{Agents: bot, URLs: []string{"/a", longURL}}), 400, "URL 2 is 8193 bytes long; the limit is 8 KiB"},
		{"too many URLs", "/api/decide", "application/json",
			mustJSON(t, decideRequest{Agents: bot, URLs: make([]string, MaxURLs+1)}), 400, "the limit is 1000"},
		{"no product token", "/api/decide", "application/json",
			mustJSON(t, decideRequest{URLs: []string{"/a"}}), 400, "no product token"},
		{"product token with a version", "/api/decide", "application/json",
			mustJSON(t, decideRequest{Agents: []string{"Googlebot/2.1"}}), 400, `product token "Googlebot/2.1"`},
		{"empty product token", "/api/decide", "application/json",
			mustJSON(t, decideRequest{Agents: []string{""}}), 400, `product token ""`},
		{"too many product tokens", "/api/decide", "application/json",
			mustJSON(t, decideRequest{Agents: make([]string, MaxAgents+1)}), 400, "the limit is 20"},
		{"form post is refused", "/api/decide", "application/x-www-form-urlencoded", `robots=x`, 415, "send application/json"},
		{"no content type", "/api/lint", "", `{}`, 415, "no content type"},
		{"unknown field to fetch", "/api/fetch", "application/json", `{"url": "https://example.com"}`, 400, `unknown field "url"; /api/fetch takes "origin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			var got errorResponse
			resp := do(t, srv, req, &got)
			if resp.StatusCode != tt.status || !strings.Contains(got.Error, tt.want) {
				t.Errorf("got %d %q, want %d with %q", resp.StatusCode, got.Error, tt.status, tt.want)
			}
		})
	}
}

// TestDecideBadURL checks that a URL that cannot be read is reported on
// that URL, not as an error of the whole request.
func TestDecideBadURL(t *testing.T) {
	srv := newServer(t, Options{})
	var got decideResponse
	body := mustJSON(t, decideRequest{Robots: shop, Agents: []string{"Bingbot"},
		URLs: []string{"/cart", "cart", "ftp://example.com/x", "/ok"}})
	if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK {
		t.Fatalf("status = %d, want 200", status)
	}
	if len(got.Decisions) != 4 || got.Decisions[0].Allowed || !got.Decisions[3].Allowed {
		t.Fatalf("decisions = %+v, want /cart refused and /ok allowed", got.Decisions)
	}
	for _, d := range got.Decisions[1:3] {
		if want := fmt.Sprintf("%q is neither a path", d.URL); !strings.HasPrefix(d.Error, want) || d.Allowed {
			t.Errorf("decision %+v, want not allowed with an error starting %s", d, want)
		}
	}
}

// TestHostGuard checks that only requests naming the listening address
// in their Host header are served: others could come through DNS
// rebinding.
func TestHostGuard(t *testing.T) {
	srv := newServer(t, Options{})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		host   string
		status int
	}{
		{srv.Listener.Addr().String(), 200},
		{fmt.Sprintf("localhost:%d", port), 200},
		{fmt.Sprintf("LocalHost:%d", port), 200},
		{fmt.Sprintf("rebind.example:%d", port), 403},
		{fmt.Sprintf("127.0.0.2:%d", port), 403},
		{fmt.Sprintf("localhost:%d", port+1), 403},
		{"localhost", 403},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			req, err := http.NewRequest("GET", srv.URL+"/api/start", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host
			var got errorResponse
			resp := do(t, srv, req, &got)
			if resp.StatusCode != tt.status || tt.status == 403 && !strings.Contains(got.Error, "DNS rebinding") {
				t.Errorf("Host %q: %d %q, want %d", tt.host, resp.StatusCode, got.Error, tt.status)
			}
		})
	}
}

func TestHostMatches(t *testing.T) {
	v4 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
	v6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	lan := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 8080}
	tests := []struct {
		host  string
		local net.Addr
		want  bool
	}{
		{"127.0.0.1", v4, true},
		{"localhost", v4, true},
		{"[::1]:8080", v6, true},
		{"localhost:8080", v6, true},
		{"[::1]", v6, false},
		{"192.0.2.7:8080", lan, true},
		{"localhost:8080", lan, false},
		{"example.com:8080", lan, false},
		{"127.0.0.1", nil, false},
	}
	for _, tt := range tests {
		if got := hostMatches(tt.host, tt.local); got != tt.want {
			t.Errorf("hostMatches(%q, %v) = %v, want %v", tt.host, tt.local, got, tt.want)
		}
	}
}

func TestDecideAtTheSizeLimit(t *testing.T) {
	srv := newServer(t, Options{})
	robots := "User-agent: *\nDisallow: /\n"
	robots += strings.Repeat("#", policy.MaxSize-len(robots))
	var got decideResponse
	if status := post(t, srv, "/api/decide", mustJSON(t, decideRequest{Robots: robots, Agents: []string{"ExampleBot"}, URLs: []string{"/x"}}), &got); status != http.StatusOK {
		t.Fatalf("a file of exactly %d bytes: status %d, want 200", policy.MaxSize, status)
	}
	if got.Decisions[0].Allowed {
		t.Errorf("/x allowed, want refused by line 2")
	}
	// The largest file the explorer reads is read, and decided as
	// crawlers read it.
	robots = "User-agent: *\nDisallow: /\n" + strings.Repeat("#\n", (MaxRobots-26)/2)
	got = decideResponse{}
	if status := post(t, srv, "/api/decide", mustJSON(t, decideRequest{Robots: robots, Agents: []string{"ExampleBot"}, URLs: []string{"/x"}}), &got); status != http.StatusOK {
		t.Fatalf("a file of exactly %d bytes: status %d, want 200", MaxRobots, status)
	}
	if got.Decisions[0].Allowed || got.Cut == nil || got.Cut.Size != MaxRobots {
		t.Errorf("/x allowed %v, cut %+v; want refused by line 2 and the cut of a %d-byte file", got.Decisions[0].Allowed, got.Cut, MaxRobots)
	}
}

// TestDecidePastTheCut checks that a file over 500 KiB is decided as
// crawlers read it, that the answer says where they stop and how many
// lines they never read, and that each decision the unread part would
// change says so: a rule past the cut that would decide it, or groups
// past it that change which rules apply. A decision the unread part does
// not change says nothing.
func TestDecidePastTheCut(t *testing.T) {
	srv := newServer(t, Options{})
	robots, cut := fixture.PastTheCut()
	tests := []struct {
		name     string
		agent    string
		url      string
		allowed  bool
		pastRule int    // the rule past the cut that would decide it; 0 for none
		pastSays string // in the note; "" for no note
	}{
		{"a rule read decides alone", "ExampleBot", "/a/x", false, 0, ""},
		{"no rule read or unread matches", "ExampleBot", "/other", true, 0, ""},
		{"an unread rule would refuse", "ExampleBot", "/deep/x", true, cut, "it lies past the 500 KiB cut"},
		{"an unread rule would allow", "ExampleBot", "/a/open/x", false, cut + 1, "Allow: /a/open"},
		{"an unread group would refuse", "LateBot", "/x", true, cut + 4, "Disallow: / (line"},
		{"an unread group would allow", "LateAllowed", "/a/x", false, 0, "change which rules apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got decideResponse
			body := mustJSON(t, decideRequest{Robots: robots, Agents: []string{tt.agent}, URLs: []string{tt.url}})
			if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK {
				t.Fatalf("status %d, want 200", status)
			}
			want := report.Cut{Line: cut, Bytes: len(policy.Truncate([]byte(robots), policy.MaxSize)), Lines: cut + 7, Size: len(robots)}
			if got.Cut == nil || *got.Cut != want || got.Lines != cut+7 {
				t.Fatalf("cut %+v, %d lines; want %+v and %d", got.Cut, got.Lines, want, cut+7)
			}
			if last := got.Warnings[len(got.Warnings)-1]; last.Line != cut || last.Message != report.CutMessage {
				t.Errorf("last warning %+v, want the cut's on line %d", last, cut)
			}
			d := got.Decisions[0]
			if d.Allowed != tt.allowed || d.Rule != nil && d.Rule.Line >= cut {
				t.Errorf("decision %+v, want allowed %v by what crawlers read", d.Decision, tt.allowed)
			}
			switch {
			case tt.pastSays == "" && d.PastCut != nil:
				t.Errorf("note %+v, want none", d.PastCut)
			case tt.pastSays == "":
			case d.PastCut == nil:
				t.Errorf("no note, want one saying %q", tt.pastSays)
			case d.PastCut.Allowed == tt.allowed || !strings.Contains(d.PastCut.Reason, tt.pastSays) ||
				(tt.pastRule == 0) != (d.PastCut.Rule == nil) || d.PastCut.Rule != nil && d.PastCut.Rule.Line != tt.pastRule:
				t.Errorf("note %+v, want the other verdict by line %d, saying %q", *d.PastCut, tt.pastRule, tt.pastSays)
			}
		})
	}
}

// TestDecideAtTheLimits checks that a request of exactly MaxAgents
// product tokens and MaxURLs URLs is decided whole; one more of either is
// refused (TestBadInput).
func TestDecideAtTheLimits(t *testing.T) {
	srv := newServer(t, Options{})
	agents := make([]string, MaxAgents)
	for i := range agents {
		agents[i] = fmt.Sprintf("Bot%d", i)
	}
	agents[MaxAgents-1] = "ExampleBot"
	urls := make([]string, MaxURLs)
	for i := range urls {
		urls[i] = fmt.Sprintf("/private/%d", i)
	}
	var got decideResponse
	body := mustJSON(t, decideRequest{Robots: "User-agent: ExampleBot\nDisallow: /private\n", Agents: agents, URLs: urls})
	if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK {
		t.Fatalf("%d tokens and %d URLs: status %d, want 200", MaxAgents, MaxURLs, status)
	}
	if len(got.Decisions) != MaxURLs {
		t.Fatalf("%d decisions, want %d", len(got.Decisions), MaxURLs)
	}
	for _, d := range got.Decisions {
		if d.Allowed || d.Token != "ExampleBot" {
			t.Fatalf("%s: allowed=%v for %q, want refused by the last token's group", d.URL, d.Allowed, d.Token)
		}
	}
}

func TestStartAndPage(t *testing.T) {
	example, err := assets.ReadFile("assets/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	exampleJSON, _ := json.Marshal(string(example))
	tests := []struct {
		name string
		opts Options
		want string // the whole answer
	}{
		{"zero options start with the example", Options{},
			`{"robots":` + string(exampleJSON) + `,"source":"example","agents":["Googlebot"],"urls":["/private/report.html","/private/press-kit/logo.png","https://shop.example/docs/manual.pdf","/tmp/cache","/cart"]}`},
		{"given file", Options{Robots: "User-agent: x\nDisallow: /\n", Source: "robots.txt"},
			`{"robots":"User-agent: x\nDisallow: /\n","source":"robots.txt","agents":["Googlebot"],"urls":["/"]}`},
		{"given empty file", Options{Source: "empty.txt"},
			`{"robots":"","source":"empty.txt","agents":["Googlebot"],"urls":["/"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.opts)
			resp, err := srv.Client().Get(srv.URL + "/api/start")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(body)); got != tt.want {
				t.Errorf("start = %s\nwant    %s", got, tt.want)
			}
		})
	}

	srv := newServer(t, Options{})
	pages := []struct {
		path, contentType, want string
		status                  int
	}{
		{"/", "text/html", `<textarea id="robots"`, 200},
		{"/assets/app.js", "text/javascript", `"/api/decide"`, 200},
		{"/assets/style.css", "text/css", ".hl-disallow", 200},
		{"/nothing", "application/json", `{"error":"no page at /nothing"}`, 404},
		{"/assets/nothing.js", "application/json", `{"error":"no page at /assets/nothing.js"}`, 404},
		{"/assets/", "application/json", `{"error":"no page at /assets/"}`, 404},
		{"/api/decide", "application/json", `{"error":"method GET not allowed on /api/decide: use POST"}`, 405},
	}
	for _, p := range pages {
		t.Run("serves "+p.path, func(t *testing.T) {
			resp, err := srv.Client().Get(srv.URL + p.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != p.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), p.contentType) || !strings.Contains(string(body), p.want) {
				t.Errorf("GET %s = %d %s, want %d %s with %q", p.path, resp.StatusCode, resp.Header.Get("Content-Type"), p.status, p.contentType, p.want)
			}
		})
	}
}

// TestDecideAgentSpelling checks that "agent", the command's spelling, is
// read as "agents": one token, a comma-separated list, or a list.
func TestDecideAgentSpelling(t *testing.T) {
	srv := newServer(t, Options{})
	for _, agent := range []string{`"Googlebot"`, `"Googlebot-News, Googlebot"`, `["Googlebot-News", "Googlebot"]`} {
		var got decideResponse
		body := `{"robots": ` + mustJSON(t, shop) + `, "agent": ` + agent + `, "urls": ["/private/x"]}`
		if status := post(t, srv, "/api/decide", body, &got); status != 200 {
			t.Fatalf("agent %s: status %d", agent, status)
		}
		if got.Token != "Googlebot" || len(got.Decisions) != 1 || got.Decisions[0].Allowed {
			t.Errorf("agent %s: token %q, decisions %+v; want Googlebot's groups to refuse /private/x", agent, got.Token, got.Decisions)
		}
	}
}

// TestCompare checks POST /api/compare: the changed URLs with both
// decisions, each file's findings, and the crawlers and URLs found by
// itself when none are given.
func TestCompare(t *testing.T) {
	srv := newServer(t, Options{})
	next := strings.Replace(shop, "Disallow: /cart", "Disallow: /cart\nDisallow: /checkout", 1)
	var got compareResponse
	body := mustJSON(t, compareRequest{Old: shop, New: next})
	if status := post(t, srv, "/api/compare", body, &got); status != 200 {
		t.Fatalf("status %d", status)
	}
	if len(got.Agents) != 2 || got.Agents[0] != "Googlebot" || got.Agents[1] != "*" {
		t.Errorf("agents %q, want Googlebot and *", got.Agents)
	}
	var changed []string
	for _, c := range got.Changes {
		changed = append(changed, c.Agent+" "+c.URL)
		if c.Agent != "*" || !c.Old.Allowed || c.New.Allowed || c.New.Rule == nil || c.New.Rule.Line != 3 {
			t.Errorf("change %+v, want * refused by line 3", c)
		}
	}
	if want := "* /checkout,* /checkout/x,* /checkout?x=1,* /checkoutx"; strings.Join(changed, ",") != want {
		t.Errorf("changes %q, want %q", changed, want)
	}
	if got.OldFile.Lines != 7 || got.NewFile.Lines != 8 || len(got.NewFile.Warnings) != 1 || got.NewFile.Warnings[0].Line != 8 {
		t.Errorf("files %+v / %+v, want 7 and 8 lines, the new file's Dissallow warned on line 8", got.OldFile, got.NewFile)
	}

	body = `{"old": ` + mustJSON(t, shop) + `, "new": ` + mustJSON(t, next) + `, "agent": "Googlebot", "urls": ["/checkout", "/cart"]}`
	got = compareResponse{}
	if status := post(t, srv, "/api/compare", body, &got); status != 200 {
		t.Fatalf("status %d", status)
	}
	if got.Compared != 2 || len(got.Changes) != 0 {
		t.Errorf("Googlebot: %+v, want 2 decisions compared and none changed", got.Result)
	}
}

// TestCompareLimits checks that a comparison lists at most maxChanges
// changes and counts the others, and refuses more than maxCompared
// decisions with a message saying how to narrow it.
func TestCompareLimits(t *testing.T) {
	srv := newServer(t, Options{})
	var rules strings.Builder
	rules.WriteString("User-agent: *\n")
	for i := range 500 {
		fmt.Fprintf(&rules, "Disallow: /p%d\n", i)
	}
	var got compareResponse
	if status := post(t, srv, "/api/compare", mustJSON(t, compareRequest{Old: "", New: rules.String()}), &got); status != 200 {
		t.Fatalf("status %d", status)
	}
	if len(got.Changes) != maxChanges || got.More != 2000-maxChanges {
		t.Errorf("%d changes listed and %d more, want %d and %d", len(got.Changes), got.More, maxChanges, 2000-maxChanges)
	}
	agents := make([]string, MaxAgents)
	for i := range agents {
		agents[i] = fmt.Sprintf("bot%d", i)
	}
	rules.Reset()
	rules.WriteString("User-agent: *\n")
	for i := range maxCompared / MaxAgents / 4 {
		fmt.Fprintf(&rules, "Disallow: /p%d\n", i)
	}
	var refused errorResponse
	status := post(t, srv, "/api/compare", mustJSON(t, compareRequest{Old: rules.String(), New: rules.String(), Agents: agents}), &refused)
	if status != 400 || !strings.Contains(refused.Error, "name the crawlers or the URLs to compare") {
		t.Errorf("status %d, %q; want 400 saying how to narrow the comparison", status, refused.Error)
	}
}

// TestDecidePreferences checks that each decision carries the URL's AI
// usage preferences with the lines that stated them, and the warnings of
// a file-wide Content-Signal line, which no group holds.
func TestDecidePreferences(t *testing.T) {
	srv := newServer(t, Options{})
	body := mustJSON(t, decideRequest{
		Robots: "Content-Signal: ai-train=no, search=maybe\n\nUser-agent: *\nDisallow: /private\nContent-Usage: /open/ train-ai=y, search=y\n",
		Agents: []string{"bot"},
		URLs:   []string{"/open/x", "/private"},
	})
	var got decideResponse
	if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK || len(got.Decisions) != 2 {
		t.Fatalf("status = %d, %+v", status, got)
	}
	open := got.Decisions[0]
	if len(open.Preferences) != 3 || open.Preferences[0].Value != "n" || open.Preferences[0].From[0].Line != 1 ||
		open.Preferences[1].Value != "y" || open.Preferences[1].From[0].Line != 5 {
		t.Errorf("/open/x preferences = %+v, want train-ai=n by line 1, search=y by line 5", open.Preferences)
	}
	if len(open.Warnings) != 1 || open.Warnings[0].Line != 1 {
		t.Errorf("/open/x warnings = %+v, want line 1's", open.Warnings)
	}
	if p := got.Decisions[1].Preferences; p[1].Value != "unknown" {
		t.Errorf("/private preferences = %+v, want search unknown on a disallowed path", p)
	}
}

// TestStartFileDecidedOnItsBytes: a start file the page cannot hold as
// it is (bytes that are not UTF-8, which it shows as U+FFFD, three bytes
// each; CRLF line ends, which a textarea gives back as LF) is decided on
// its own bytes when sent back unedited: its 500 KiB cut falls where
// crawlers' does, not where the longer or shorter text would put it.
func TestStartFileDecidedOnItsBytes(t *testing.T) {
	// 476,030 bytes (884,030 shown); 517,032 bytes (506,030 with LFs).
	latin1 := strings.Repeat("Disallow: /caf\xe9-\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\n", 17000)
	crlf := strings.Repeat("Disallow: /some/long/enough/path/for/the/test\r\n", 11000)
	for _, tc := range []struct{ name, file string }{
		{"not UTF-8, under the cut as bytes", "User-agent: *\n" + latin1 + "Disallow: /tail\n"},
		{"CRLF, over the cut as bytes", "User-agent: *\r\n" + crlf + "Disallow: /tail\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, Options{Robots: tc.file, Source: "robots.txt"})
			var start startResponse
			do(t, srv, mustRequest(t, "GET", srv.URL+"/api/start"), &start)
			read, cut := report.Crawled([]byte(tc.file))
			want := policy.Parse(read).Agent("ExampleBot").Decide("/tail").Allowed
			for _, sent := range []string{start.Robots, strings.ReplaceAll(start.Robots, "\r\n", "\n")} {
				var got decideResponse
				body := mustJSON(t, decideRequest{Robots: sent, Agents: []string{"ExampleBot"}, URLs: []string{"/tail"}})
				if status := post(t, srv, "/api/decide", body, &got); status != http.StatusOK {
					t.Fatalf("status %d, want 200", status)
				}
				if (got.Cut != nil) != cut || got.Cut != nil && got.Cut.Bytes != len(read) {
					t.Errorf("cut %+v; want one at byte %d: %v", got.Cut, len(read), cut)
				}
				if d := got.Decisions[0]; d.Allowed != want {
					t.Errorf("/tail allowed %v, want %v as crawlers read the file", d.Allowed, want)
				}
			}
		})
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
