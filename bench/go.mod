module github.com/crawlkit/robots/bench

go 1.26.0

require (
	github.com/crawlkit/robots v0.0.0
	github.com/temoto/robotstxt v1.1.2
)

replace github.com/crawlkit/robots => ../
