package skipnote

import "testing"

// TestPackagePath checks that the line names the package under test by
// its import path, found from the directory go test runs it in.
func TestPackagePath(t *testing.T) {
	if got, want := packagePath(), "github.com/crawlkit/robots/internal/skipnote"; got != want {
		t.Errorf("packagePath() = %q, want %q", got, want)
	}
}
