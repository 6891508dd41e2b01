// Package skipper is run by TestRedirectedOutputKeepsTheLine: its one
// test skips for want of a tool, as the project's tests do outside CI.
package skipper

import (
	"testing"

	"github.com/crawlkit/robots/internal/skipnote"
)

func TestNeedsATool(t *testing.T) {
	t.Setenv("CI", "")
	skipnote.Require(t, "no-such-tool", "apt-get install no-such-tool")
}
