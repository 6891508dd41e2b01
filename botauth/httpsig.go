package botauth

import (
	"crypto/ed25519"
	"encoding/base64"
	"strconv"
	"strings"
)

// The signature base of RFC 9421 section 2.5, built from values the
// caller has already resolved: this package signs only messages whose
// components it derives itself (a request's method, authority and path,
// a header it set, a response's digest), so a base is a list of lines
// rather than a general component resolver.

// component is one covered component: its identifier as it appears in
// the base and in Signature-Input (already serialized, parameters
// included) and its value.
type component struct {
	id    string
	value string
}

// param is one signature parameter (RFC 9421 section 2.3), a string or
// an integer, kept in the order it is serialized.
type param struct {
	name  string
	str   string
	num   int64
	isNum bool
}

func strParam(name, v string) param { return param{name: name, str: v} }
func numParam(name string, v int64) param {
	return param{name: name, num: v, isNum: true}
}

// componentID serializes a component name with optional parameters as
// an RFC 9651 String with parameters: "signature-agent";key="sig1".
func componentID(name string, params ...param) string {
	var b strings.Builder
	b.WriteString(sfString(name))
	writeParams(&b, params)
	return b.String()
}

// flagID serializes a component name with a Boolean parameter that is
// true, which RFC 9651 section 4.1.1.2 writes as the bare key:
// "@authority";req.
func flagID(name, flag string) string {
	return sfString(name) + ";" + flag
}

// signatureParams serializes the inner list of covered components and
// the signature parameters: the value of "@signature-params" and of the
// label's member of Signature-Input (RFC 9421 section 2.3).
func signatureParams(components []component, params []param) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range components {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.id)
	}
	b.WriteByte(')')
	writeParams(&b, params)
	return b.String()
}

func writeParams(b *strings.Builder, params []param) {
	for _, p := range params {
		b.WriteByte(';')
		b.WriteString(p.name)
		b.WriteByte('=')
		if p.isNum {
			b.WriteString(strconv.FormatInt(p.num, 10))
		} else {
			b.WriteString(sfString(p.str))
		}
	}
}

// signatureBase is the text RFC 9421 section 2.5 signs: one line per
// covered component and the "@signature-params" line last, without a
// trailing newline.
func signatureBase(components []component, sigParams string) string {
	var b strings.Builder
	for _, c := range components {
		b.WriteString(c.id)
		b.WriteString(": ")
		b.WriteString(c.value)
		b.WriteByte('\n')
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(sigParams)
	return b.String()
}

// signed is one signature ready to be sent: the label's members of
// Signature-Input and Signature.
type signed struct {
	input     string // label=(...);created=...
	signature string // label=:base64:
}

// sign signs the base of components and params with key under label.
func sign(key ed25519.PrivateKey, label string, components []component, params []param) signed {
	sp := signatureParams(components, params)
	sig := ed25519.Sign(key, []byte(signatureBase(components, sp)))
	return signed{
		input:     label + "=" + sp,
		signature: label + "=" + sfBytes(sig),
	}
}

// sfString serializes s as an RFC 9651 String (section 4.1.6). The
// caller has checked that s holds only printable ASCII (validString).
func sfString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// sfBytes serializes b as an RFC 9651 Byte Sequence (section 4.1.8).
func sfBytes(b []byte) string {
	return ":" + base64.StdEncoding.EncodeToString(b) + ":"
}

// validString reports whether s can be an RFC 9651 String: printable
// ASCII only (section 3.3.3).
func validString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// validKey reports whether s can be an RFC 9651 Dictionary key or
// parameter name (section 3.1.2): a lowercase letter or "*", then
// lowercase letters, digits, "_", "-", "." or "*".
func validKey(s string) bool {
	if s == "" || !(s[0] == '*' || 'a' <= s[0] && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("_-.*", c) >= 0) {
			return false
		}
	}
	return true
}
