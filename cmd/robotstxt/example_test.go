package main

import (
	"fmt"
	"os"
)

// The test command explains each decision: the deciding rule, the group it
// belongs to, and the findings of the lines that can concern the URL,
// each printed once.
func Example_test() {
	run([]string{"test", "-robots", "../../testdata/cli/example.txt", "-agent", "ExampleBot",
		"/private/open/page", "/two%20words/page", "https://example.com/public", "/robots.txt"}, nil, os.Stdout, os.Stderr)
	// Output:
	// ALLOWED     /private/open/page
	//   by Allow: /private/open (line 7) in the group for ExampleBot (lines 5-9)
	// ALLOWED     /two%20words/page
	//   no rule matched in the group for ExampleBot (lines 5-9)
	//   error: line 8: Disallow pattern "/two words" contains a space; ignored: write "/two%20words"
	// ALLOWED     https://example.com/public  (matched as /public)
	//   no rule matched in the group for ExampleBot (lines 5-9)
	// ALLOWED     /robots.txt
	//   /robots.txt is always allowed
}

// The lint command prints every finding as FILE:LINE: message, errors and
// notes with their level, and fails on an error or a warning.
func Example_lint() {
	status := run([]string{"lint", "../../testdata/cli/example.txt"}, nil, os.Stdout, os.Stderr)
	fmt.Println("exit status", status)
	// Output:
	// ../../testdata/cli/example.txt:8: error: Disallow pattern "/two words" contains a space; ignored: write "/two%20words"
	// exit status 1
}

// The cases command prints every case whose decision differs from the one
// expected, then the counts.
func Example_cases() {
	status := run([]string{"cases", "../../testdata/cli/failing"}, nil, os.Stdout, os.Stderr)
	fmt.Println("exit status", status)
	// Output:
	// ../../testdata/cli/failing/cases.csv:3: ExampleBot /private/open: expected disallowed, got allowed by Allow: /private/open (line 3), ../../testdata/cli/failing/robots.txt:3
	// ../../testdata/cli/failing/cases.csv:4: ExampleBot /public: expected disallowed, got allowed (no rule matched)
	// ../../testdata/cli/failing/cases.csv:5: ExampleBot ftp://example.com/x: expected allowed, but the URL cannot be read: not a path or an http(s) URL
	// ../../testdata/cli/failing/cases.csv:6: ExampleBot /robots.txt: expected disallowed, got allowed (/robots.txt is always allowed)
	// ../../testdata/cli/failing/cases.csv:7: OtherBot /private: expected disallowed, got allowed (no group names this crawler and there is no * group)
	// 1 passed, 5 failed
	// exit status 1
}
