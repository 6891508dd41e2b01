module github.com/crawlkit/robots/internal/explorer/browsertest

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/crawlkit/robots v0.0.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79 // indirect
	github.com/maypok86/otter/v2 v2.4.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

replace github.com/crawlkit/robots => ../../../
