package botauth

import (
	"strings"
	"testing"
)

// FuzzParseAcceptSignature feeds the parser what a hostile site could
// send: it never panics, and what it accepts holds only lower-case
// component names and labels that are RFC 9651 keys.
func FuzzParseAcceptSignature(f *testing.F) {
	for _, s := range []string{
		`sig1=("@method" "@authority" "@path");nonce="abc";keyid="k";tag="web-bot-auth"`,
		`sig2=("signature-agent";key="sig2" "@query"), sig3=()`,
		`a=("x";key="y");created;expires=?1;alg=ed25519`,
		`a=("\"\\");nonce="\\"`, `=`, `a=(`, `a=("`, `a=("x";`, `a=(),`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseAcceptSignature(s)
		if err != nil {
			return
		}
		for _, c := range got {
			if !validKey(c.label) {
				t.Errorf("label %q is not a key", c.label)
			}
			for _, ac := range c.components {
				if ac.name != strings.ToLower(ac.name) {
					t.Errorf("component %q is not lower case", ac.name)
				}
			}
		}
	})
}
