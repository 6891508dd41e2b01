module github.com/crawlkit/robots/example/frontier

go 1.26.0

require (
	github.com/crawlkit/robots v0.0.0
	github.com/crawlkit/robots/redisstore v0.0.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79 // indirect
	github.com/maypok86/otter/v2 v2.4.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

replace (
	github.com/crawlkit/robots => ../../
	github.com/crawlkit/robots/redisstore => ../../redisstore
)
