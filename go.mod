module github.com/crawlkit/robots

go 1.26.0

require (
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79
	github.com/maypok86/otter/v2 v2.4.0
	golang.org/x/net v0.62.0
	golang.org/x/sync v0.25.0
	golang.org/x/time v0.16.0
)

require golang.org/x/text v0.43.0 // indirect
