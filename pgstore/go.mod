module github.com/crawlkit/robots/pgstore

go 1.26.0

require (
	github.com/crawlkit/robots v0.0.0
	github.com/jackc/pgx/v5 v5.13.0
)

require (
	github.com/gregjones/httpcache v0.0.0-20190611155906-901d90724c79 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/maypok86/otter/v2 v2.4.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

replace github.com/crawlkit/robots => ../
