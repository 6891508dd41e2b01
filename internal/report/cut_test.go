package report

import (
	"strings"
	"testing"

	"github.com/crawlkit/robots/policy"
)

// TestCrawled checks what crawlers read of a file around the 500 KiB
// limit: all of it within the limit, up to the last whole line past it,
// and a CRLF split by the limit leaves nothing out.
func TestCrawled(t *testing.T) {
	// fill pads tail's start to end exactly at the limit, after whole
	// comment lines.
	fill := func(tail string) string {
		return "#" + strings.Repeat("x", policy.MaxSize-2) + tail
	}
	tests := []struct {
		name     string
		data     string
		wantRead int
		wantCut  bool
	}{
		{"within the limit", "User-agent: *\nDisallow: /\n", 26, false},
		{"exactly at the limit", fill("\n"), policy.MaxSize, false},
		{"a CRLF split by the limit", fill("\r\n"), policy.MaxSize, false},
		{"a line after a CRLF split by the limit", fill("\r\nDisallow: /\n"), policy.MaxSize, true},
		{"a line crossing the limit", fill("\nDisallow: /\n")[1:] + "x", policy.MaxSize - 1, true},
		{"no line end within the limit", strings.Repeat("x", policy.MaxSize+1), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read, cut := Crawled([]byte(tt.data))
			if len(read) != tt.wantRead || cut != tt.wantCut || tt.data[:len(read)] != string(read) {
				t.Errorf("read %d bytes, cut %v; want the first %d and %v", len(read), cut, tt.wantRead, tt.wantCut)
			}
		})
	}
}
