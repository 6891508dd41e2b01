package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlkit/robots/internal/explorer"
	"github.com/crawlkit/robots/internal/explorer/fixture"
	"github.com/crawlkit/robots/internal/skipnote"
)

// browserPath finds a Chromium or Chrome to drive. With none, the test is
// skipped on a developer's machine but fails in CI, where .ci/run installs
// Debian's chromium: the page must be checked there.
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	skipnote.Require(t, "chromium (or google-chrome)", "apt-get install chromium")
	return ""
}

// lineState is what the test reads of one line of the drawn file.
type lineState struct {
	Present  bool   `json:"present"`
	Class    string `json:"class"`
	Mark     string `json:"mark"`
	Warnings int    `json:"warnings"`
	InGroup  string `json:"inGroup"` // data-group of the selected group box around the line
}

// decisionState is what the test reads of the first decision.
type decisionState struct {
	URL      string `json:"url"`
	Decision string `json:"decision"`
	Line     string `json:"line"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
}

const readDecision = `(() => {
	const d = document.querySelector("#decisions .decision");
	if (!d) return {};
	const text = (s) => (d.querySelector(s) || {}).textContent || "";
	return {url: text(".url"), decision: d.dataset.decision, line: d.dataset.line || "",
		rule: text(".rule"), reason: text(".reason")};
})()`

func readLine(n string) string {
	return `(() => {
	const l = document.querySelector('#file [data-line="` + n + `"]');
	if (!l) return {present: false};
	const g = l.closest(".group.selected");
	return {present: true, class: l.className, mark: (l.querySelector(".mark") || {}).textContent || "",
		warnings: l.querySelectorAll(".warning").length, inGroup: g ? g.dataset.group : ""};
})()`
}

// TestBrowser types a robots.txt, a product token and URLs into the page in
// a real headless browser and checks the decision, the rule it names and
// the highlighted line, the live fetch and its failure, the comparison of
// two files, a file over 500 KiB with its cut and a decision past it, and
// that a page reached under another host name (DNS rebinding) is
// refused. With
// EXPLORER_SCREENSHOT=FILE it first writes a PNG of the page as it starts,
// with its example, to FILE.
func TestBrowser(t *testing.T) {
	exe := browserPath(t)
	srv := httptest.NewServer(explorer.New(explorer.Options{}))
	t.Cleanup(srv.Close)

	// A generous ceiling for the whole test: only a hang reaches it.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	// Without UserDataDir the allocator gives the browser a fresh profile
	// directory and removes it, waiting out Chrome's late writes.
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("font-render-hinting", "none"),
		// A name of another site that resolves to this machine, as DNS
		// rebinding makes it do.
		chromedp.Flag("host-resolver-rules", "MAP "+rebindHost+" 127.0.0.1"),
	)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)

	wait := func(expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Minute))); err != nil {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(srv.URL),
	)
	if err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	wait(`document.body.dataset.state === "ready" && document.querySelectorAll("#decisions .decision").length === 5`)
	if out := os.Getenv("EXPLORER_SCREENSHOT"); out != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}

	robots := strings.Join([]string{
		"User-agent: *",        // 1
		"Disallow: /private",   // 2
		"Allow: /private/ok",   // 3
		"",                     // 4
		"User-agent: OtherBot", // 5
		"Disallow: /",          // 6
		"Noindex: /old",        // 7: unknown field, warned
	}, "\n")
	err = chromedp.Do(ctx,
		clearField("#robots"),
		chromedp.SendKeys(chromedp.CSS("#robots"), robots),
		clearField("#agents"),
		chromedp.SendKeys(chromedp.CSS("#agents"), "TestBot"),
	)
	if err != nil {
		t.Fatalf("typing the robots.txt: %v", err)
	}

	tests := []struct {
		name     string
		url      string
		decision string
		line     string // the deciding line, highlighted with class
		class    string
		mark     string
		other    string // a line that must not be highlighted
	}{
		{"disallow rule decides and is highlighted", "/private/page.html", "disallowed", "2", "hl-disallow", "✗ disallow", "3"},
		{"longer allow rule decides and the highlight moves", "/private/ok/page.html", "allowed", "3", "hl-allow", "✓ allow", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := chromedp.Do(ctx,
				clearField("#urls"),
				chromedp.SendKeys(chromedp.CSS("#urls"), tt.url),
			)
			if err != nil {
				t.Fatalf("typing the URL: %v", err)
			}
			wait(`(() => { const d = document.querySelector("#decisions .decision .url");
				return d && d.textContent === ` + jsString(tt.url) + ` })()`)
			d, err := chromedp.Run(ctx, chromedp.Evaluate[decisionState](readDecision))
			if err != nil {
				t.Fatal(err)
			}
			if d.Decision != tt.decision || d.Line != tt.line || !strings.Contains(d.Rule, "line "+tt.line) ||
				!strings.HasPrefix(d.Reason, tt.decision+" by ") {
				t.Errorf("decision = %+v, want %s by line %s", d, tt.decision, tt.line)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[lineState](readLine(tt.line)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(" "+got.Class+" ", " "+tt.class+" ") || !strings.HasPrefix(got.Mark, tt.mark) {
				t.Errorf("line %s = %+v, want class %s and mark %q", tt.line, got, tt.class, tt.mark)
			}
			if got.InGroup != "1-3" {
				t.Errorf("line %s is in selected group %q, want the * group 1-3 boxed", tt.line, got.InGroup)
			}
			other, err := chromedp.Run(ctx, chromedp.Evaluate[lineState](readLine(tt.other)))
			if err != nil {
				t.Fatal(err)
			}
			if !other.Present || strings.Contains(other.Class, "hl-") || other.Mark != "" {
				t.Errorf("line %s = %+v, want it present and not highlighted", tt.other, other)
			}
		})
	}

	t.Run("warning is drawn next to its line", func(t *testing.T) {
		l, err := chromedp.Run(ctx, chromedp.Evaluate[lineState](readLine("7")))
		if err != nil {
			t.Fatal(err)
		}
		if l.Warnings != 1 || l.InGroup != "" {
			t.Errorf("line 7 = %+v, want one warning and no selected group", l)
		}
	})

	t.Run("preferences are shown with the decision and their lines highlighted", func(t *testing.T) {
		prefs := strings.Join([]string{
			"User-agent: *",                                // 1
			"Disallow: /private",                           // 2
			"Content-Usage: train-ai=n",                    // 3: states train-ai=n for /page
			"Content-Usage: /open/ train-ai=y, search=yes", // 4: noted, yes is not y
			"Content-Signal: ai-train=maybe",               // 5: warned
		}, "\n")
		err := chromedp.Do(ctx,
			clearField("#robots"),
			chromedp.SendKeys(chromedp.CSS("#robots"), prefs),
			clearField("#urls"),
			chromedp.SendKeys(chromedp.CSS("#urls"), "/page"),
		)
		if err != nil {
			t.Fatal(err)
		}
		wait(`(() => { const d = document.querySelector("#decisions .decision");
			return d && d.querySelector(".url").textContent === "/page" && d.querySelector(".prefs") &&
				document.querySelector('#file [data-line="5"]') })()`)
		type prefState struct {
			TrainAI string `json:"trainAI"`
			Search  string `json:"search"`
			Link    string `json:"link"`
		}
		p, err := chromedp.Run(ctx, chromedp.Evaluate[prefState](`(() => {
			const d = document.querySelector("#decisions .decision");
			const chip = (l) => d.querySelector('.pref[data-label="' + l + '"]');
			const a = chip("train-ai").querySelector("a");
			return {trainAI: chip("train-ai").dataset.value, search: chip("search").dataset.value,
				link: a ? a.getAttribute("href") : ""};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if p.TrainAI != "n" || p.Search != "unknown" || p.Link != "#L3" {
			t.Errorf("preferences = %+v, want train-ai=n linked to line 3 and search unknown", p)
		}
		l, err := chromedp.Run(ctx, chromedp.Evaluate[lineState](readLine("3")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(" "+l.Class+" ", " hl-pref ") || !strings.HasPrefix(l.Mark, "◆ train-ai=n ← /page") {
			t.Errorf("line 3 = %+v, want it highlighted as stating train-ai=n", l)
		}
		other, err := chromedp.Run(ctx, chromedp.Evaluate[lineState](readLine("4")))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(other.Class, "hl-") || !strings.Contains(other.Class, "noted") {
			t.Errorf("line 4 = %+v, want a note and no highlight (a shorter path than /open/ decides)", other)
		}
		warned, err := chromedp.Run(ctx, chromedp.Evaluate[lineState](readLine("5")))
		if err != nil {
			t.Fatal(err)
		}
		if warned.Warnings != 1 {
			t.Errorf("line 5 = %+v, want one warning for the malformed value", warned)
		}
	})

	t.Run("live fetch fills the editor and shows the outcome", func(t *testing.T) {
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("User-agent: *\nDisallow: /live\n"))
		}))
		t.Cleanup(site.Close)
		err := chromedp.Do(ctx,
			clearField("#origin"),
			chromedp.SendKeys(chromedp.CSS("#origin"), site.URL),
			chromedp.Click(chromedp.CSS("#fetch")),
		)
		if err != nil {
			t.Fatal(err)
		}
		wait(`document.getElementById("fetch-result").dataset.outcome === "parsed"`)
		err = chromedp.Do(ctx, clearField("#urls"), chromedp.SendKeys(chromedp.CSS("#urls"), "/live/x"))
		if err != nil {
			t.Fatal(err)
		}
		wait(`(() => { const d = document.querySelector("#decisions .decision");
			return d && d.querySelector(".url").textContent === "/live/x" && d.dataset.line === "2" })()`)
		result, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#fetch-result")))
		if err != nil {
			t.Fatal(err)
		}
		if want := site.URL + "/robots.txt → HTTP 200: parsed"; !strings.HasPrefix(result, want) {
			t.Errorf("fetch result %q, want it to start with %q", result, want)
		}
		d, err := chromedp.Run(ctx, chromedp.Evaluate[decisionState](readDecision))
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != "disallowed" || !strings.Contains(d.Reason, "Disallow: /live (line 2)") {
			t.Errorf("decision = %+v, want disallowed by Disallow: /live (line 2)", d)
		}
	})

	t.Run("failed live fetch shows its reason", func(t *testing.T) {
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close() // nothing listens there any more
		err := chromedp.Do(ctx,
			clearField("#origin"),
			chromedp.SendKeys(chromedp.CSS("#origin"), gone.URL),
			chromedp.Click(chromedp.CSS("#fetch")),
		)
		if err != nil {
			t.Fatal(err)
		}
		wait(`document.getElementById("fetch-result").dataset.outcome === "unreachable"`)
		result, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#fetch-result")))
		if err != nil {
			t.Fatal(err)
		}
		if want := gone.URL + "/robots.txt → unreachable: "; !strings.HasPrefix(result, want) || !strings.Contains(result, "connection refused") {
			t.Errorf("fetch result %q, want it to start with %q and give the reason, connection refused", result, want)
		}
	})

	t.Run("URL that is neither a path nor http(s) is named on its decision", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`agentsEl.value = "TestBot"; urlsEl.value = "/ok\nexample.com/x"; urlsEl.dispatchEvent(new Event("input"))`))
		if err != nil {
			t.Fatal(err)
		}
		wait(`(() => { const d = document.querySelectorAll("#decisions .decision");
			return d.length === 2 && d[1].dataset.decision === "error" && d[0].dataset.decision === "allowed" })()`)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#decisions .decision")].map((d) => d.textContent)
			.concat([document.getElementById("error").hidden ? "" : document.getElementById("error").textContent])`))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || !strings.Contains(got[1], `"example.com/x" is neither a path`) || got[2] != "" {
			t.Errorf("decisions and error banner %q, want the error on the second URL only", got)
		}
	})

	errorTests := []struct {
		name   string
		script string // changes a field and fires its input event
		want   string // in the page's error message
	}{
		{"no product token is refused and said",
			`agentsEl.value = ""; agentsEl.dispatchEvent(new Event("input"))`, "no product token"},
		{"file over 2000 KiB is refused",
			`robotsEl.value = "Disallow: /x\n".repeat(160000); robotsEl.dispatchEvent(new Event("input"))`, "the explorer reads up to 2000 KiB"},
	}
	for _, tt := range errorTests {
		t.Run(tt.name, func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](tt.script)); err != nil {
				t.Fatal(err)
			}
			wait(`(() => { const e = document.getElementById("error");
				return !e.hidden && e.textContent.includes(` + jsString(tt.want) + `) })()`)
		})
	}

	t.Run("comparison lists the URLs whose decision changes", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`robotsEl.value = "User-agent: *\nDisallow: /private\n"`),
			chromedp.Click(chromedp.CSS("#compare-copy")),
			clearField("#compare-new"),
			chromedp.SendKeys(chromedp.CSS("#compare-new"), "User-agent: *\nDisallow: /private\nDisallow: /drafts\n"),
			chromedp.Click(chromedp.CSS("#compare-run")),
		)
		if err != nil {
			t.Fatal(err)
		}
		wait(`document.getElementById("compare").dataset.state === "ready"`)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#changes .change")].map((c) =>
			c.dataset.agent + " " + c.dataset.url + " | " + c.querySelector(".old").textContent + " | " + c.querySelector(".new").textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"* /drafts | old: ✓ allowed: no rule matched | new: ✗ disallowed by line 3: Disallow: /drafts",
			"* /drafts/x | old: ✓ allowed: no rule matched | new: ✗ disallowed by line 3: Disallow: /drafts",
			"* /drafts?x=1 | old: ✓ allowed: no rule matched | new: ✗ disallowed by line 3: Disallow: /drafts",
			"* /draftsx | old: ✓ allowed: no rule matched | new: ✗ disallowed by line 3: Disallow: /drafts",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("changes listed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		summary, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#compare-summary")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(summary, "4 of ") {
			t.Errorf("summary %q, want it to count 4 changes", summary)
		}

		// A URL given by hand that changes nothing lists no change.
		err = chromedp.Do(ctx,
			clearField("#compare-urls"),
			chromedp.SendKeys(chromedp.CSS("#compare-urls"), "/private/x"),
			chromedp.Click(chromedp.CSS("#compare-run")),
		)
		if err != nil {
			t.Fatal(err)
		}
		wait(`document.getElementById("compare").dataset.state === "ready" && document.getElementById("compare-summary").textContent.startsWith("0 of 1 ")`)
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#changes .change").length`)); err != nil || n != 0 {
			t.Errorf("%d changes listed (%v), want none", n, err)
		}
	})

	// A long file whose group for the first product token, Googlebot-Image
	// (lines 35-150, below Googlebot's 1-33), states an AI usage preference
	// on line 36, far above the rules that decide the URLs, on lines 84 and
	// 150.
	var long []string
	for n := 1; n <= 150; n++ {
		switch n {
		case 1:
			long = append(long, "User-agent: Googlebot")
		case 34:
			long = append(long, "")
		case 35:
			long = append(long, "User-agent: Googlebot-Image")
		case 36:
			long = append(long, "Content-Usage: train-ai=n")
		case 84:
			long = append(long, "Disallow: /img/private")
		case 150:
			long = append(long, "Allow: /img/public/")
		default:
			long = append(long, fmt.Sprintf("Disallow: /g%d/", n))
		}
	}
	longRobots := strings.Join(long, "\n")
	const longAgents, longURLs = "Googlebot-Image, Googlebot", "/img/private/a.png\n/img/public/b.png"

	// inView reports whether line n is drawn and inside the file panel's
	// visible part.
	inView := func(t *testing.T, n int) bool {
		t.Helper()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
			const l = document.getElementById("L%d"), f = document.getElementById("file");
			if (!l) return false;
			const lr = l.getBoundingClientRect(), fr = f.getBoundingClientRect();
			return lr.top >= fr.top && lr.bottom <= fr.bottom;
		})()`, n)))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	t.Run("file panel shows the line deciding the selected URL", func(t *testing.T) {
		err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`robotsEl.value = `+jsString(longRobots)+`;
			agentsEl.value = `+jsString(longAgents)+`; urlsEl.value = `+jsString(longURLs)+`;
			robotsEl.dispatchEvent(new Event("input"))`))
		if err != nil {
			t.Fatal(err)
		}
		wait(`(() => { const d = document.querySelectorAll("#decisions .decision");
			return d.length === 2 && d[0].dataset.line === "84" && d[1].dataset.line === "150" })()`)
		if !inView(t, 84) {
			t.Error("line 84, deciding the first URL, is not in the file panel's view")
		}
		// Selecting the second decision brings its line, far below, into view.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#decisions .decision[data-index="1"] .reason`))); err != nil {
			t.Fatal(err)
		}
		wait(`document.querySelector('#file .line.active[data-line="150"]') !== null`)
		if !inView(t, 150) || inView(t, 84) {
			t.Errorf("after selecting the second URL: line 150 in view %v, line 84 in view %v; want only 150", inView(t, 150), inView(t, 84))
		}
	})

	t.Run("page state is put in and read from the page URL", func(t *testing.T) {
		link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		if err != nil {
			t.Fatal(err)
		}
		permalink, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#decisions .decision[data-index="1"] .permalink').href`))
		if err != nil {
			t.Fatal(err)
		}
		if permalink != link {
			t.Errorf("the selected decision's link is %q, want the page's URL %q", permalink, link)
		}
		// The link opens the page as it was, elsewhere: a fresh page.
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.WaitReady("#decisions")); err != nil {
			t.Fatal(err)
		}
		wait(`document.body.dataset.state === "ready" && document.querySelectorAll("#decisions .decision").length === 2`)
		type pageState struct {
			Robots, Agents, URLs string
			Active               string
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](`({Robots: robotsEl.value, Agents: agentsEl.value, URLs: urlsEl.value,
			Active: document.querySelector("#decisions .decision.active").dataset.line})`))
		if err != nil {
			t.Fatal(err)
		}
		if want := (pageState{longRobots, longAgents, longURLs, "150"}); got != want {
			t.Errorf("page opened from its link: tokens %q, URLs %q, selected line %s, robots.txt the same %v; want %q, %q, 150, true",
				got.Agents, got.URLs, got.Active, got.Robots == longRobots, want.Agents, want.URLs)
		}
		if !inView(t, 150) {
			t.Error("line 150, deciding the selected URL of the link, is not in view")
		}

		// A link may name the origin to fetch the file from instead.
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("User-agent: *\nDisallow: /linked\n"))
		}))
		t.Cleanup(site.Close)
		byOrigin := srv.URL + "/?origin=" + url.QueryEscape(site.URL) + "&agents=TestBot&urls=" + url.QueryEscape("/linked/x")
		if err := chromedp.Do(ctx, chromedp.Navigate(byOrigin), chromedp.WaitReady("#decisions")); err != nil {
			t.Fatal(err)
		}
		wait(`(() => { const d = document.querySelector("#decisions .decision");
			return d && d.querySelector(".url").textContent === "/linked/x" && d.dataset.decision === "disallowed" && d.dataset.line === "2" })()`)
		if q, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new URLSearchParams(location.search).get("origin")`)); err != nil || q != site.URL {
			t.Errorf("after the fetch the page URL names origin %q (%v), want %q", q, err, site.URL)
		}
	})

	t.Run("file over 500 KiB shows the cut and the decision past it", func(t *testing.T) {
		// The page starts with the file, as "robotstxt serve -robots"
		// starts it; the link names the crawler and the URLs.
		big, cut := fixture.PastTheCut()
		bigSrv := httptest.NewServer(explorer.New(explorer.Options{Robots: big, Source: "big.txt"}))
		t.Cleanup(bigSrv.Close)
		link := bigSrv.URL + "/?agents=ExampleBot&urls=" + url.QueryEscape("/deep/x\n/a/x")
		if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitReady("#decisions")); err != nil {
			t.Fatal(err)
		}
		wait(`document.body.dataset.state === "ready" && document.querySelectorAll("#decisions .decision").length === 2 && document.getElementById("cut") !== null`)
		type cutState struct {
			Mark, Summary, Past, PastLine, Other string
			FirstUnread, LastRead                bool
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[cutState](fmt.Sprintf(`(() => {
			const d = document.querySelectorAll("#decisions .decision"), past = (i) => d[i].querySelector(".past-cut");
			return {Mark: document.getElementById("cut").textContent, Summary: document.getElementById("summary").textContent,
				Past: past(0) ? past(0).textContent : "", PastLine: d[0].dataset.pastCut || "",
				Other: past(1) ? past(1).textContent : "",
				FirstUnread: document.getElementById("L%d").classList.contains("unread"),
				LastRead: document.getElementById("L%d").classList.contains("unread")};
		})()`, cut, cut-1)))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("crawlers stop reading here. Lines %d–%d below (8 lines", cut, cut+7); !strings.Contains(got.Mark, want) {
			t.Errorf("the cut reads %q, want it to say %q", got.Mark, want)
		}
		if want := fmt.Sprintf("%d lines, ", cut+7); !strings.HasPrefix(got.Summary, want) || !strings.Contains(got.Summary, fmt.Sprintf("crawlers read lines 1–%d", cut-1)) {
			t.Errorf("summary %q, want the file's %d lines and what crawlers read", got.Summary, cut+7)
		}
		if !got.FirstUnread || got.LastRead {
			t.Errorf("line %d drawn unread %v, line %d %v; want only the first", cut, got.FirstUnread, cut-1, got.LastRead)
		}
		if want := fmt.Sprintf("Line %d would decide it, but it lies past the 500 KiB cut", cut); !strings.Contains(got.Past, want) || got.PastLine != fmt.Sprint(cut) {
			t.Errorf("/deep/x notes %q (line %q), want %q", got.Past, got.PastLine, want)
		}
		if got.Other != "" {
			t.Errorf("/a/x, decided by line 2 read or not, notes %q, want nothing", got.Other)
		}
		if !inView(t, cut) {
			t.Errorf("line %d, the unread rule that would decide the selected URL, is not in view", cut)
		}
		d, err := chromedp.Run(ctx, chromedp.Evaluate[decisionState](readDecision))
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != "allowed" || !strings.HasPrefix(d.Reason, "allowed: no rule matched") {
			t.Errorf("/deep/x: %+v, want allowed, as crawlers read the file", d)
		}
	})

	t.Run("another host name for this address is refused", func(t *testing.T) {
		port := srv.Listener.Addr().(*net.TCPAddr).Port
		rebound := fmt.Sprintf("http://%s:%d/", rebindHost, port)
		if err := chromedp.Do(ctx, chromedp.Navigate(rebound)); err != nil {
			t.Fatalf("opening %s: %v", rebound, err)
		}
		// What a rebinding page would do: call the API as same-origin.
		status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/api/fetch", {method: "POST",
			headers: {"Content-Type": "application/json"}, body: JSON.stringify({origin: "http://127.0.0.1:1"})})
			.then(async (r) => r.status + " " + (await r.json()).error)`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(status, "403 ") || !strings.Contains(status, "DNS rebinding") {
			t.Errorf("POST /api/fetch from %s: %q, want 403 naming DNS rebinding", rebound, status)
		}
		page, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("body")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page, rebindHost) || strings.Contains(page, "robots.txt explorer") {
			t.Errorf("page at %s shows %q, want the refusal naming the host, not the explorer", rebound, page)
		}
	})
}

// rebindHost is the name the browser resolves to 127.0.0.1, standing for
// a site whose DNS was re-pointed at this machine.
const rebindHost = "rebind.example"

// clearField empties the field that sel names without an input event, so the
// keys typed next make the page's only requests.
func clearField(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`void (document.querySelector(` + jsString(sel) + `).value = "")`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
