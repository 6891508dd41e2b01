package policy_test

import (
	"fmt"

	"github.com/crawlkit/robots/policy"
)

const exampleFile = `User-agent: *
Disallow: /private
Allow: /private/open

User-agent: ExampleBot
Crawl-delay: 2
Disallow: /*.pdf$
Disallow: /drafts

Sitemap: https://site.example/sitemap.xml
`

func ExampleParse() {
	r := policy.Parse([]byte(exampleFile))
	fmt.Println(len(r.Groups()), "groups,", len(r.Warnings()), "warnings")
	fmt.Println(r.Sitemaps())
	// Output:
	// 2 groups, 0 warnings
	// [https://site.example/sitemap.xml]
}

func ExampleRobots_Allowed() {
	r := policy.Parse([]byte(exampleFile))
	fmt.Println(r.Allowed("/private/x", "OtherBot"))
	fmt.Println(r.Allowed("/private/open/x", "OtherBot"))
	fmt.Println(r.Allowed("/private/open/../x", "OtherBot")) // as the server resolves it
	fmt.Println(r.Allowed("/private/x", "ExampleBot"))
	fmt.Println(r.Allowed("/paper.pdf", "examplebot"))
	// Output:
	// false
	// true
	// false
	// true
	// false
}

func ExampleRobots_Decide() {
	r := policy.Parse([]byte(exampleFile))
	for _, path := range []string{"/private/x", "/private/open/y", "/about"} {
		fmt.Println(path, r.Decide(path, "OtherBot"))
	}
	d := r.Decide("/drafts/1", "ExampleBot-News", "ExampleBot")
	fmt.Println(d.Token, d.Rule.Line, d.Allowed)
	// Output:
	// /private/x disallowed by Disallow: /private (line 2)
	// /private/open/y allowed by Allow: /private/open (line 3)
	// /about allowed: no rule matched
	// ExampleBot 8 false
}

func ExampleRobots_CrawlDelay() {
	r := policy.Parse([]byte(exampleFile))
	fmt.Println(r.CrawlDelay("ExampleBot"))
	// Output: 2s true
}

func ExampleRobots_Warnings() {
	r := policy.Parse([]byte("User-agent: ExampleBot/1.0\nDisalow: /x\nDisallow: /a b\n"))
	for _, w := range r.Warnings() {
		fmt.Println(w)
	}
	// Output:
	// line 1: note: User-agent "ExampleBot/1.0" read as its product token "ExampleBot"
	// line 2: "Disalow" read as "disallow"
	// line 3: error: Disallow pattern "/a b" contains a space; ignored: write "/a%20b"
}

func ExampleProductToken() {
	fmt.Println(policy.ProductToken("ExampleBot/1.0 (+https://example.com/bot)"))
	fmt.Println(policy.ProductToken("MJ12bot"))
	// Output:
	// ExampleBot
	// MJ12bot
}

func ExampleRobots_Agent() {
	r := policy.Parse([]byte(exampleFile))
	bot := r.Agent("ExampleBot-News", "ExampleBot") // chosen once, used for many paths
	delay, _ := bot.CrawlDelay()
	fmt.Println(bot.Token(), delay)
	for _, path := range []string{"/drafts/1", "/paper.pdf", "/private/x"} {
		fmt.Println(path, bot.Allowed(path))
	}
	// Output:
	// ExampleBot 2s
	// /drafts/1 false
	// /paper.pdf false
	// /private/x true
}

func ExampleAgent_DecideLiteral() {
	r := policy.Parse([]byte(exampleFile))
	bot := r.Agent("OtherBot")
	fmt.Println(bot.DecideLiteral("/public/../private/x"))
	fmt.Println(bot.Decide("/public/../private/x"))
	// Output:
	// allowed: no rule matched
	// disallowed by Disallow: /private (line 2) once the path is resolved as servers do: /private/x
}

func ExampleDecision_Reason() {
	r := policy.Parse([]byte(exampleFile))
	for _, path := range []string{"/private/x", "/robots.txt?x=1"} {
		fmt.Println(r.Decide(path, "OtherBot").Reason())
	}
	// Output:
	// by Disallow: /private (line 2)
	// /robots.txt is always allowed
}

// ExampleAgent_OptedOut reads a site's AI usage opt-out as a crawler
// declaring its purposes does: in every form of the URL a server serves,
// so that "/public/../ai/x" is read as "/ai/x".
func ExampleAgent_OptedOut() {
	r := policy.Parse([]byte("User-agent: *\nContent-Usage: /ai/ train-ai=n\nContent-Usage: /public/ train-ai=y\n"))
	a := r.Agent("ExampleBot")
	label, _ := policy.LabelOf("ai-train") // Content-Signal's spelling
	if p, out := a.OptedOut("/public/../ai/x", label); out {
		fmt.Printf("%s=n by %s, resolved as %s\n", p.Label, p.From[0], p.Resolved)
	}
	fmt.Println(a.PreferencesLiteral("/public/../ai/x").Label(label).Usage, "read literally")
	// Output:
	// train-ai=n by Content-Usage: /ai/ train-ai=n (line 2), resolved as /ai/x
	// y read literally
}
