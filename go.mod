module github.com/crawlkit/robots

go 1.26
