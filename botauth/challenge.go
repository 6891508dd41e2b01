package botauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A site asks for a fresh or different signature with Accept-Signature
// (RFC 9421 section 5.1), usually on a 401, 403 or 429: for each label,
// the covered components it wants and the signature parameters to use
// (a nonce of its own, a key, a tag). The Transport answers once: one new
// request signed as asked. A second challenge, or components it cannot
// cover, is a *ChallengeError.

// challengeStatuses are the statuses whose Accept-Signature is answered.
var challengeStatuses = map[int]bool{
	http.StatusUnauthorized:    true,
	http.StatusForbidden:       true,
	http.StatusTooManyRequests: true,
}

// maxAcceptSignature bounds the field read, so that a hostile site
// cannot make the signer parse without end.
const maxAcceptSignature = 8 << 10

// maxChallengeBody is how much of a challenge's body a ChallengeError
// keeps for the caller.
const maxChallengeBody = 64 << 10

// ChallengeError is the error of a request a site challenged with
// Accept-Signature that the Transport could not answer: the site asked
// for components or parameters the signer cannot give, or challenged the
// answer again. Response is the site's challenge, its body read into
// memory (up to 64 KiB), for the caller to read.
type ChallengeError struct {
	// AcceptSignature is the field the site sent: what it asked.
	AcceptSignature string
	// Reason says why the challenge was not answered.
	Reason string
	// Response is the challenge itself, its body already read.
	Response *http.Response
}

// Error says what the site asked and why it was not answered.
func (e *ChallengeError) Error() string {
	status := 0
	if e.Response != nil {
		status = e.Response.StatusCode
	}
	field := e.AcceptSignature
	if len(field) > maxErrorField {
		field = field[:maxErrorField] + "…"
	}
	return fmt.Sprintf("botauth: signature challenge (%d, Accept-Signature: %s) not answered: %s", status, field, e.Reason)
}

// maxErrorField is how much of the field a ChallengeError's message
// quotes: a site's field may be 8 KiB, and the whole is AcceptSignature.
const maxErrorField = 256

// challenge is one label's request in an Accept-Signature field.
type challenge struct {
	label      string
	components []askedComponent
	keyid      string // the key asked for, "" for any
	nonce      string // the site's nonce, "" for a fresh one
	tag        string // the tag asked for, "" for Tag
	alg        string
}

// askedComponent is one component a challenge asks to cover: a derived
// component ("@path") or a field name, and the Dictionary member key
// asked for ("signature-agent";key="sig2").
type askedComponent struct {
	name, key string
}

// answerKey is the context key of the challenge a request answers.
type answerKey struct{}

// Answer reads resp, the response to req, for a signature challenge: a
// 401, 403 or 429 carrying Accept-Signature. For one it returns the
// request to send in answer, a clone of req that the Transport signs as
// asked when it sends it (the label, the components in order, the site's
// nonce, key and tag when given), with a fresh "created". It returns nil
// for a response that is no challenge. A challenge it cannot answer (the
// components or parameters asked are not ones it can sign, or req was
// itself the answer to a challenge) is a *ChallengeError holding resp,
// its body read; resp is then no longer the caller's to close.
//
// robots.Transport calls Answer on every response when the Transport is
// its base, and sends the answer once, decided and paced like any
// request; a caller sending through the Transport alone calls it itself.
func (t *Transport) Answer(req *http.Request, resp *http.Response) (*http.Request, error) {
	field := strings.Join(resp.Header.Values("Accept-Signature"), ", ")
	if field == "" || !challengeStatuses[resp.StatusCode] {
		return nil, nil
	}
	fail := func(reason string) error {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxChallengeBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return &ChallengeError{AcceptSignature: field, Reason: reason, Response: resp}
	}
	if req.Context().Value(answerKey{}) != nil {
		return nil, fail("the answer was challenged again")
	}
	asked, err := parseAcceptSignature(field)
	if err != nil {
		return nil, fail(err.Error())
	}
	var reasons []string
	for _, c := range asked {
		if err := t.canAnswer(req, &c); err != nil {
			reasons = append(reasons, c.label+": "+err.Error())
			continue
		}
		out := req.Clone(context.WithValue(req.Context(), answerKey{}, &c))
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, fail("the request's body cannot be sent again")
			}
			if out.Body, err = req.GetBody(); err != nil {
				return nil, fail("the request's body: " + err.Error())
			}
		}
		return out, nil
	}
	return nil, fail(strings.Join(reasons, "; "))
}

// canAnswer reports why c cannot be signed for req, nil when it can.
func (t *Transport) canAnswer(req *http.Request, c *challenge) error {
	if c.alg != "" && c.alg != "ed25519" {
		return fmt.Errorf("algorithm %q asked; the signer has Ed25519 keys", c.alg)
	}
	if c.keyid != "" {
		if !t.hasKey(c.keyid) {
			return fmt.Errorf("key %q asked; the signer has none by that id", c.keyid)
		}
		created := t.clock()().Unix()
		if _, ok := t.key(time.Unix(created, 0), time.Unix(created+t.lifetime, 0), c.keyid); !ok {
			return fmt.Errorf("key %q asked; it cannot sign now (outside its NotBefore and Expires)", c.keyid)
		}
	}
	for _, ac := range c.components {
		switch {
		case ac.name == "signature-agent":
			if t.agent == nil {
				return errors.New(`"signature-agent" asked; the signer has no Agent`)
			}
		case ac.key != "":
			return fmt.Errorf("%q asked with a key parameter; only signature-agent has members", ac.name)
		case strings.HasPrefix(ac.name, "@"):
			if !derivedComponents[ac.name] {
				return fmt.Errorf("derived component %q cannot be signed", ac.name)
			}
		case len(req.Header.Values(ac.name)) == 0:
			return fmt.Errorf("field %q asked; the request has none", ac.name)
		}
	}
	return nil
}

// hasKey reports whether the signer holds a key of id keyid.
func (t *Transport) hasKey(keyid string) bool {
	for _, k := range t.keys {
		if k.keyid == keyid {
			return true
		}
	}
	return false
}

// derivedComponents are the derived components (RFC 9421 section 2.2)
// the signer resolves for a request.
var derivedComponents = map[string]bool{
	"@method": true, "@authority": true, "@path": true, "@scheme": true,
	"@target-uri": true, "@request-target": true, "@query": true,
}

// askedComponents resolves c's components for req sent to authority, in
// the order asked, and the Signature-Agent field to send ("" for the
// default one).
func (t *Transport) askedComponents(req *http.Request, authority string, c *challenge) ([]component, string, error) {
	if err := t.canAnswer(req, c); err != nil {
		return nil, "", err
	}
	var out []component
	var agentField string
	for _, ac := range c.components {
		id := sfString(ac.name)
		var value string
		switch ac.name {
		case "@method":
			value = req.Method
			if value == "" {
				value = http.MethodGet
			}
		case "@authority":
			value = authority
		case "@path":
			value = normalPath(req.URL)
		case "@scheme":
			value = strings.ToLower(req.URL.Scheme)
		case "@target-uri":
			value = strings.ToLower(req.URL.Scheme) + "://" + authority + normalPath(req.URL)
			if req.URL.ForceQuery || req.URL.RawQuery != "" {
				value += "?" + req.URL.RawQuery
			}
		case "@request-target":
			value = req.URL.RequestURI()
		case "@query":
			value = "?" + req.URL.RawQuery
		case "signature-agent":
			url := t.agent[AgentString].value
			if ac.key != "" {
				id = componentID(ac.name, strParam("key", ac.key))
				agentField, value = ac.key+"="+url, url
			} else {
				agentField, value = url, url
			}
		default:
			value = fieldValue(req.Header.Values(ac.name))
		}
		out = append(out, component{id: id, value: value})
	}
	// A price the request offers is covered whether asked or not: the
	// site takes a price only under the crawler's signature.
	return appendCovered(out, req), agentField, nil
}

// parseAcceptSignature parses an Accept-Signature field: an RFC 9651
// Dictionary whose members are inner lists of component identifiers
// (Strings, with parameters) with signature parameters.
func parseAcceptSignature(field string) ([]challenge, error) {
	if len(field) > maxAcceptSignature {
		return nil, fmt.Errorf("Accept-Signature is over %d bytes", maxAcceptSignature)
	}
	p := &sfParser{s: field}
	var out []challenge
	p.ows()
	for !p.done() {
		label, err := p.key()
		if err != nil {
			return nil, err
		}
		if !p.eat('=') || !p.eat('(') {
			return nil, p.fail("a member is not an inner list of components")
		}
		c := challenge{label: label}
		for p.ows(); !p.eat(')'); p.ows() {
			name, err := p.str()
			if err != nil {
				return nil, err
			}
			ac := askedComponent{name: name}
			for p.eat(';') {
				k, v, err := p.param()
				if err != nil {
					return nil, err
				}
				if k != "key" || v == "" {
					return nil, fmt.Errorf("component %q asked with parameter %q, which the signer does not support", name, k)
				}
				ac.key = v
			}
			if ac.name != strings.ToLower(ac.name) {
				return nil, fmt.Errorf("component %q is not lower case", name)
			}
			if slices.Contains(c.components, ac) {
				// RFC 9421 section 2.5: a component is covered once.
				return nil, fmt.Errorf("component %q asked twice", name)
			}
			c.components = append(c.components, ac)
			if p.done() {
				return nil, p.fail("an inner list is not closed")
			}
		}
		for p.eat(';') {
			k, v, err := p.param()
			if err != nil {
				return nil, err
			}
			switch k {
			case "keyid":
				c.keyid = v
			case "nonce":
				c.nonce = v
			case "tag":
				c.tag = v
			case "alg":
				c.alg = v
			}
		}
		out = append(out, c)
		p.ows()
		if p.done() {
			break
		}
		if !p.eat(',') {
			return nil, p.fail("members are not separated by a comma")
		}
		p.ows()
		if p.done() {
			return nil, p.fail("a comma ends the field") // RFC 9651 section 4.2.2
		}
	}
	if len(out) == 0 {
		return nil, errors.New("Accept-Signature names no label")
	}
	return out, nil
}

// sfParser reads the parts of RFC 9651 an Accept-Signature field uses.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

func (p *sfParser) fail(reason string) error {
	return fmt.Errorf("Accept-Signature at byte %d: %s", p.i, reason)
}

func (p *sfParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *sfParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// key reads a Dictionary or parameter key.
func (p *sfParser) key() (string, error) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789_-.*", p.s[p.i]) >= 0 {
		p.i++
	}
	if k := p.s[start:p.i]; validKey(k) {
		return k, nil
	}
	return "", p.fail("not a key")
}

// str reads a String.
func (p *sfParser) str() (string, error) {
	if !p.eat('"') {
		return "", p.fail("not a String")
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i >= len(p.s) || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return "", p.fail("a bad escape in a String")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", p.fail("a String holds a character past printable ASCII")
		default:
			b.WriteByte(c)
		}
	}
	return "", p.fail("a String is not closed")
}

// param reads a parameter after its ";": its key, and its value as text
// (a String's contents, a Token, an Integer), "" for a bare true.
func (p *sfParser) param() (string, string, error) {
	p.ows()
	k, err := p.key()
	if err != nil {
		return "", "", err
	}
	if !p.eat('=') {
		return k, "", nil
	}
	if p.i < len(p.s) && p.s[p.i] == '"' {
		v, err := p.str()
		return k, v, err
	}
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(" \t;,()=", p.s[p.i]) < 0 {
		p.i++
	}
	v := p.s[start:p.i]
	if v == "?1" || v == "?0" {
		return k, "", nil
	}
	if _, err := strconv.ParseInt(v, 10, 64); err != nil && !validToken(v) {
		return "", "", p.fail("a parameter's value is not a String, a Token, an Integer or a Boolean")
	}
	return k, v, nil
}

// validToken reports whether s is an RFC 9651 Token.
func validToken(s string) bool {
	if s == "" || !(s[0] == '*' || 'a' <= s[0]|0x20 && s[0]|0x20 <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || strings.IndexByte("\"(),;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}
