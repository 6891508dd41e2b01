// Package sfv parses the Dictionary of RFC 9651 (Structured Field Values
// for HTTP), the syntax of AI usage preferences. It validates every
// member, inner lists and parameters included, as RFC 9651 section 4.2
// requires, and keeps of each member only what a preference reads: its
// key and, when its value is a Token, that token. Parsing takes time
// linear in the input and allocates only the members it returns.
package sfv

import (
	"encoding/base64"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Member is one key of a Dictionary and its value.
type Member struct {
	// Key is the member's key, lower case by the syntax.
	Key string
	// Token is the member's value when it is a Token (RFC 9651 section
	// 3.3.4), valid when IsToken; parameters are dropped.
	Token   string
	IsToken bool
}

// ErrSyntax is what every parse failure matches with errors.Is.
var ErrSyntax = errors.New("sfv: not a valid Dictionary")

// SyntaxError says where, in bytes, a Dictionary stopped parsing and why.
type SyntaxError struct {
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("sfv: not a valid Dictionary: %s at byte %d", e.Reason, e.Offset)
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// ParseDictionary parses s as a Dictionary field value (RFC 9651 sections
// 4.2 and 4.2.2): leading and trailing spaces are discarded, and the
// members are returned in the order their keys first appear, each with
// the value of its last appearance, as the RFC's algorithm keeps them. An
// empty s is an empty Dictionary. Anything else that does not parse,
// such as an upper-case key, a trailing comma or an unclosed string,
// gives a *SyntaxError and no members.
func ParseDictionary(s string) ([]Member, error) {
	p := parser{s: s}
	p.skip(' ')
	members, err := p.dictionary()
	if err != nil {
		return nil, err
	}
	p.skip(' ')
	if p.i < len(p.s) {
		return nil, p.fail("unexpected character after the Dictionary")
	}
	return members, nil
}

// parser is the state of one parse: the input and the position in it.
type parser struct {
	s string
	i int
}

func (p *parser) fail(reason string) error { return &SyntaxError{Offset: p.i, Reason: reason} }

func (p *parser) peek() (byte, bool) {
	if p.i < len(p.s) {
		return p.s[p.i], true
	}
	return 0, false
}

// skip discards every leading c.
func (p *parser) skip(c byte) {
	for p.i < len(p.s) && p.s[p.i] == c {
		p.i++
	}
}

// skipOWS discards optional white space, spaces and tabs.
func (p *parser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// dictionary is RFC 9651 section 4.2.2.
func (p *parser) dictionary() ([]Member, error) {
	var (
		out []Member
		at  map[string]int // index of each key in out, once out is long
	)
	for p.i < len(p.s) {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		m := Member{Key: key}
		if c, _ := p.peek(); c == '=' {
			p.i++
			if m.Token, m.IsToken, err = p.itemOrInnerList(); err != nil {
				return nil, err
			}
		} else if err := p.parameters(); err != nil {
			// A key alone is the Boolean true, with its parameters.
			return nil, err
		}
		out, at = set(out, at, m)
		p.skipOWS()
		if p.i == len(p.s) {
			return out, nil
		}
		if p.s[p.i] != ',' {
			return nil, p.fail("expected a comma between members")
		}
		p.i++
		p.skipOWS()
		if p.i == len(p.s) {
			return nil, p.fail("trailing comma")
		}
	}
	return out, nil
}

// set puts m in members, in place of an earlier member of its key. Short
// lists are searched; past a few members at indexes them, so that a line
// of many keys costs linear time.
func set(members []Member, at map[string]int, m Member) ([]Member, map[string]int) {
	if at == nil && len(members) >= 8 {
		at = make(map[string]int, 2*len(members))
		for k, x := range members {
			at[x.Key] = k
		}
	}
	if at != nil {
		if k, ok := at[m.Key]; ok {
			members[k] = m
			return members, at
		}
		at[m.Key] = len(members)
		return append(members, m), at
	}
	for k := range members {
		if members[k].Key == m.Key {
			members[k] = m
			return members, at
		}
	}
	return append(members, m), at
}

// key is RFC 9651 section 4.2.3.3.
func (p *parser) key() (string, error) {
	c, ok := p.peek()
	if !ok || !(isLCAlpha(c) || c == '*') {
		return "", p.fail("a key starts with a lower-case letter or *")
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(isLCAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*') {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// itemOrInnerList is RFC 9651 section 4.2.1.1; it reports the value when
// it is a Token.
func (p *parser) itemOrInnerList() (token string, isToken bool, err error) {
	if c, _ := p.peek(); c == '(' {
		return "", false, p.innerList()
	}
	return p.item()
}

// innerList is RFC 9651 section 4.2.1.2.
func (p *parser) innerList() error {
	p.i++ // the "("
	for p.i < len(p.s) {
		p.skip(' ')
		if c, _ := p.peek(); c == ')' {
			p.i++
			return p.parameters()
		}
		if _, _, err := p.item(); err != nil {
			return err
		}
		if c, ok := p.peek(); !ok || c != ' ' && c != ')' {
			return p.fail("expected a space or ) in an inner list")
		}
	}
	return p.fail("inner list not closed")
}

// item is RFC 9651 section 4.2.3: a bare item and its parameters.
func (p *parser) item() (token string, isToken bool, err error) {
	if token, isToken, err = p.bareItem(); err != nil {
		return "", false, err
	}
	return token, isToken, p.parameters()
}

// parameters is RFC 9651 section 4.2.3.2; the parameters are validated
// and dropped.
func (p *parser) parameters() error {
	for p.i < len(p.s) && p.s[p.i] == ';' {
		p.i++
		p.skip(' ')
		if _, err := p.key(); err != nil {
			return err
		}
		if c, _ := p.peek(); c == '=' {
			p.i++
			if _, _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

// bareItem is RFC 9651 section 4.2.3.1.
func (p *parser) bareItem() (token string, isToken bool, err error) {
	c, ok := p.peek()
	switch {
	case !ok:
		return "", false, p.fail("value missing")
	case c == '-' || isDigit(c):
		return "", false, p.number(true)
	case c == '"':
		return "", false, p.str()
	case isAlpha(c) || c == '*':
		token = p.token()
		return token, true, nil
	case c == ':':
		return "", false, p.bytes()
	case c == '?':
		return "", false, p.boolean()
	case c == '@':
		p.i++
		return "", false, p.number(false)
	case c == '%':
		return "", false, p.displayString()
	}
	return "", false, p.fail("not the start of a value")
}

// number is RFC 9651 section 4.2.4: an Integer of at most 15 digits or,
// when decimals is true, a Decimal of at most 12 integer and 3 fraction
// digits.
func (p *parser) number(decimals bool) error {
	if c, _ := p.peek(); c == '-' {
		p.i++
	}
	if c, ok := p.peek(); !ok || !isDigit(c) {
		return p.fail("a number needs a digit")
	}
	digits, dot, frac := 0, false, 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case isDigit(c):
			if dot {
				frac++
			} else {
				digits++
			}
		case c == '.' && decimals && !dot:
			if digits > 12 {
				return p.fail("a decimal has at most 12 integer digits")
			}
			dot = true
		default:
			goto done
		}
		p.i++
		if !dot && digits > 15 {
			return p.fail("an integer has at most 15 digits")
		}
		if frac > 3 {
			return p.fail("a decimal has at most 3 fraction digits")
		}
	}
done:
	if dot && frac == 0 {
		return p.fail("a decimal ends in a digit")
	}
	return nil
}

// str is RFC 9651 section 4.2.5.
func (p *parser) str() error {
	p.i++ // the opening quote
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i == len(p.s) || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return p.fail(`a string escapes only " and \`)
			}
			p.i++
		case c == '"':
			return nil
		case c < 0x20 || c > 0x7e:
			p.i--
			return p.fail("a string holds only printable ASCII")
		}
	}
	return p.fail("string not closed")
}

// token is RFC 9651 section 4.2.6; the caller has seen its first
// character.
func (p *parser) token() string {
	start := p.i
	p.i++
	for p.i < len(p.s) && (isTChar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return p.s[start:p.i]
}

// bytes is RFC 9651 section 4.2.7.
func (p *parser) bytes() error {
	p.i++ // the opening colon
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' {
		c := p.s[p.i]
		if !(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=') {
			return p.fail("a byte sequence holds only base64")
		}
		p.i++
	}
	if p.i == len(p.s) {
		return p.fail("byte sequence not closed")
	}
	b64 := p.s[start:p.i]
	p.i++
	// RFC 9651 lets a parser accept base64 without its padding.
	if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
		if _, err := base64.RawStdEncoding.DecodeString(b64); err != nil {
			return p.fail("a byte sequence is not valid base64")
		}
	}
	return nil
}

// boolean is RFC 9651 section 4.2.8.
func (p *parser) boolean() error {
	p.i++ // the "?"
	if c, ok := p.peek(); ok && (c == '0' || c == '1') {
		p.i++
		return nil
	}
	return p.fail("a boolean is ?0 or ?1")
}

// displayString is RFC 9651 section 4.2.10.
func (p *parser) displayString() error {
	p.i++ // the "%"
	if c, ok := p.peek(); !ok || c != '"' {
		return p.fail(`a display string starts with %"`)
	}
	p.i++
	var buf []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '%':
			if p.i+2 >= len(p.s) || !isLCHex(p.s[p.i+1]) || !isLCHex(p.s[p.i+2]) {
				return p.fail("a display string escapes as % and two lower-case hex digits")
			}
			buf = append(buf, unhex(p.s[p.i+1])<<4|unhex(p.s[p.i+2]))
			p.i += 3
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return p.fail("a display string is not valid UTF-8")
			}
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("a display string holds only printable ASCII")
		default:
			buf = append(buf, c)
			p.i++
		}
	}
	return p.fail("display string not closed")
}

func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLCHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c - 'a' + 10
}

// isTChar is the tchar of RFC 9110 section 5.6.2.
func isTChar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
