package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no bytes make Parse or Decide panic, and that the
// yes/no and explained answers agree.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/conformance/*/robots.txt")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data, "/a/b?c", "googlebot")
		}
	}
	f.Add([]byte("\xff\xfe\x00garbage\r\r\n:::"), "/", "*")
	f.Fuzz(func(t *testing.T, data []byte, path, token string) {
		r := Parse(data)
		d := r.Decide(path, token)
		if got := r.Allowed(path, token); got != d.Allowed {
			t.Errorf("Allowed = %v, Decide = %+v", got, d)
		}
		a := r.Agent(token)
		dl := a.DecideLiteral(path)
		if got := a.AllowedLiteral(path); got != dl.Allowed {
			t.Errorf("AllowedLiteral = %v, DecideLiteral = %+v", got, dl)
		}
		if d.Allowed && !dl.Allowed {
			t.Errorf("Decide allowed what DecideLiteral refused: %+v, %+v", d, dl)
		}
		for _, w := range r.Warnings() {
			if w.Line < 1 || w.Line > r.Lines() {
				t.Errorf("warning on line %d of %d: %s", w.Line, r.Lines(), w.Message)
			}
		}
	})
}
