package report

import (
	"bytes"

	"github.com/crawlkit/robots/policy"
)

// CutMessage is the warning on the first line crawlers never read.
const CutMessage = "content past 500 KiB is ignored by crawlers"

// Cut is where crawlers stop reading a robots.txt longer than
// policy.MaxSize (RFC 9309 section 2.5): they read its first 500 KiB up to
// the last whole line, and nothing after.
type Cut struct {
	// Line is the first line crawlers never read; they read every line
	// before it whole.
	Line int `json:"line"`
	// Bytes is how many bytes they read: lines 1 to Line-1.
	Bytes int `json:"bytes"`
	// Lines is how many lines the whole file has, and Size how many
	// bytes; both 0 when only what crawlers read was read.
	Lines int `json:"lines,omitempty"`
	Size  int `json:"size,omitempty"`
}

// Crawled returns the part of data that crawlers read, its first
// policy.MaxSize bytes up to the last whole line, and whether they leave
// anything out (see CutAt).
func Crawled(data []byte) (read []byte, cut bool) {
	return CutAt(data, policy.MaxSize)
}

// CutAt returns data's first limit bytes up to the last whole line, and
// whether anything is left out. To tell, data needs two bytes past limit,
// if the file has them: a cut inside a CRLF leaves out nothing but its
// LF.
func CutAt(data []byte, limit int) (kept []byte, cut bool) {
	kept = policy.Truncate(data, limit)
	rest := data[len(kept):]
	if bytes.HasSuffix(kept, []byte("\r")) && bytes.HasPrefix(rest, []byte("\n")) {
		rest = rest[1:]
	}
	return kept, len(rest) > 0
}

// Warning is the cut's warning, on its line.
func (c *Cut) Warning() Warning {
	return Warning{Line: c.Line, Message: CutMessage, Severity: policy.SeverityWarning.String()}
}
