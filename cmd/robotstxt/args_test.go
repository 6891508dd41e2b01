package main

import (
	"flag"
	"slices"
	"testing"
)

func TestAgentListSet(t *testing.T) {
	tests := []struct {
		name       string
		values     []string
		wantTokens []string
		wantNotes  int
		wantErr    bool
	}{
		{name: "one token", values: []string{"ExampleBot"}, wantTokens: []string{"ExampleBot"}},
		{name: "a comma list keeps its order", values: []string{"Googlebot-Image, Googlebot"}, wantTokens: []string{"Googlebot-Image", "Googlebot"}},
		{name: "repeated flags keep their order", values: []string{"A", "B,C"}, wantTokens: []string{"A", "B", "C"}},
		{name: "the star token", values: []string{"*"}, wantTokens: []string{"*"}},
		{name: "a full User-Agent gives its product token", values: []string{"ExampleBot/1.0 (+https://example.com/bot)"}, wantTokens: []string{"ExampleBot"}, wantNotes: 1},
		{
			name:       "a full User-Agent with commas is one agent",
			values:     []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"},
			wantTokens: []string{"Mozilla"}, wantNotes: 1,
		},
		{name: "an empty agent is an error", values: []string{" "}, wantErr: true},
		{name: "an agent without a product token is an error", values: []string{"/1.0"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a agentList
			var err error
			for _, v := range tt.values {
				if err = a.Set(v); err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && (!slices.Equal(a.tokens, tt.wantTokens) || len(a.notes) != tt.wantNotes) {
				t.Errorf("tokens %q with %d notes, want %q with %d", a.tokens, len(a.notes), tt.wantTokens, tt.wantNotes)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantJSON bool
		wantPos  []string
	}{
		{"flags first", []string{"-json", "/a", "/b"}, true, []string{"/a", "/b"}},
		{"flags between and after arguments", []string{"/a", "-json", "/b"}, true, []string{"/a", "/b"}},
		{"a lone - is an argument", []string{"-", "-json"}, true, []string{"-"}},
		{"everything after -- is an argument", []string{"/a", "--", "-json"}, false, []string{"/a", "-json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fl := flag.NewFlagSet("t", flag.ContinueOnError)
			asJSON := fl.Bool("json", false, "")
			pos, err := parseFlags(fl, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if *asJSON != tt.wantJSON || !slices.Equal(pos, tt.wantPos) {
				t.Errorf("json %v, arguments %q; want %v, %q", *asJSON, pos, tt.wantJSON, tt.wantPos)
			}
		})
	}
}
