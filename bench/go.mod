module github.com/crawlkit/robots/bench

go 1.26.0

require (
	github.com/crawlkit/robots v0.0.0
	github.com/temoto/robotstxt v1.1.2
)

require (
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79 // indirect
	golang.org/x/sync v0.25.0 // indirect
)

replace github.com/crawlkit/robots => ../
