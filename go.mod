module github.com/crawlkit/robots

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79
	github.com/maypok86/otter/v2 v2.4.0
	github.com/redis/go-redis/v9 v9.23.0
	golang.org/x/net v0.62.0
	golang.org/x/sync v0.25.0
	golang.org/x/time v0.16.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
