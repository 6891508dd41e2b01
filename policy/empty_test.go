package policy

import (
	"strings"
	"testing"
)

// TestEmptyRules checks RFC 9309 section 2.2.2's empty pattern: an empty
// Disallow alone in its group is the valid allow-all and gets no word; one
// beside other rules, or an empty Allow, gets a Note, never a warning.
func TestEmptyRules(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		notes map[int]string // line: fragment of its note
	}{
		{"allow-all is silent", "User-agent: *\nDisallow:\n", nil},
		{"allow-all with a Crawl-delay is silent", "User-agent: *\nCrawl-delay: 5\nDisallow:\n", nil},
		{"allow-all in each of two groups is silent", "User-agent: a\nDisallow:\n\nUser-agent: b\nDisallow:\n", nil},
		{"beside another rule it is a note", "User-agent: *\nDisallow:\nDisallow: /x\n",
			map[int]string{2: "empty Disallow disallows nothing"}},
		{"twice in a group both are notes", "User-agent: *\nDisallow:\nDisallow:\n",
			map[int]string{2: "empty Disallow", 3: "empty Disallow"}},
		{"an empty Allow is a note", "User-agent: *\nAllow:\n", map[int]string{2: "empty Allow matches nothing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.file))
			got := map[int]string{}
			for _, w := range r.Warnings() {
				if w.Severity != SeverityNote {
					t.Errorf("warning %s, want none", w)
				}
				got[w.Line] = w.String()
			}
			if len(got) != len(tt.notes) {
				t.Errorf("notes %v, want %v", got, tt.notes)
			}
			for line, frag := range tt.notes {
				if !strings.HasPrefix(got[line], "line ") || !strings.Contains(got[line], "note: "+frag) {
					t.Errorf("line %d: %q, want a note containing %q", line, got[line], frag)
				}
			}
		})
	}
}

// TestNotesInLineOrder checks that notes, added once the file is read,
// sit among the warnings in line order.
func TestNotesInLineOrder(t *testing.T) {
	r := Parse([]byte("User-agent: *\nAllow:\nFrobnicate: 1\nDisallow: /x\nUser agent: b\n"))
	var lines []int
	for _, w := range r.Warnings() {
		lines = append(lines, w.Line)
	}
	if len(lines) != 3 || lines[0] != 2 || lines[1] != 3 || lines[2] != 5 {
		t.Errorf("warning lines %v, want [2 3 5]", lines)
	}
}
