module github.com/crawlkit/robots

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79
	golang.org/x/sync v0.25.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
)
