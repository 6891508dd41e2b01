package botauth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/crawlkit/robots/internal/target"
)

// Tag is the value of the "tag" signature parameter of every signature
// the Transport makes, as the draft requires.
const Tag = "web-bot-auth"

// DefaultLifetime is the time from "created" to "expires" of a signature
// when Options.Lifetime is zero: long enough for a request to cross a
// slow network and a verifier's clock to lag a little, short enough that
// a captured signature is soon worthless.
const DefaultLifetime = 5 * time.Minute

// DefaultLabel is the signature's label when Options.Label is empty.
const DefaultLabel = "sig1"

// nonceSize is the nonce's length before encoding: 64 random bytes, as
// Cloudflare's signer makes them.
const nonceSize = 64

// ErrNoKey is the error, wrapped, of a request the Transport cannot sign
// because no key is valid at the time (none given, none begun yet, or
// every one ending before a signature made now would expire). The
// request is not sent.
var ErrNoKey = errors.New("botauth: no signing key is valid now")

// AgentForm is how the Signature-Agent field names the key directory:
// the choice of wire form a verifier expects. Verifiers disagree, so the
// zero value is the form the largest of them accepts today.
type AgentForm int

const (
	// AgentString sends Signature-Agent as a bare RFC 9651 String,
	// `"https://crawler.example/..."`, and the signature covers the whole
	// field, `"signature-agent"`, with no component parameter. It is the
	// default: Cloudflare's production verifier (which implements the
	// earlier directory draft and lists the `key` parameter as
	// unsupported) and the web-bot-auth package on npm (0.1.3) accept it,
	// as did draft-meunier-web-bot-auth-architecture up to -03.
	AgentString AgentForm = iota

	// AgentDictionary sends Signature-Agent as an RFC 9651 Dictionary
	// whose member, keyed by the signature's label, is the URL of the
	// directory's JWK Set: `sig1="https://crawler.example/..."`, with no
	// member parameters. The signature covers that member,
	// `"signature-agent";key="sig1"`. This is the working group's form,
	// draft-ietf-webbotauth-httpsig-protocol-00 and -01 (its test
	// vectors), for verifiers that follow it.
	AgentDictionary
)

// String returns the form's Go name.
func (f AgentForm) String() string {
	switch f {
	case AgentString:
		return "AgentString"
	case AgentDictionary:
		return "AgentDictionary"
	}
	return "AgentForm(" + strconv.Itoa(int(f)) + ")"
}

// Options configures a Transport. The zero value of every field but Keys
// is usable; Keys needs at least one key with a private half.
type Options struct {
	// Keys are the crawler's keys. Each request is signed with the key
	// valid at the time whose NotBefore is latest, so that a new key
	// takes over when its window opens while the old one stays published
	// (see Key). A key without Private is ignored by the signer. If no
	// key is valid, requests fail with ErrNoKey.
	Keys []Key

	// Agent is the absolute https URL of the crawler's key directory,
	// sent in the Signature-Agent field and covered by the signature:
	// usually "https://<the crawler's domain>" + WellKnownPath. If empty,
	// no Signature-Agent is sent, and only a verifier that already holds
	// the key can verify (the draft's identification by thumbprint alone).
	Agent string

	// AgentForm is how Signature-Agent is written. If zero, it is
	// AgentString, the form Cloudflare's verifier and the npm package
	// accept.
	AgentForm AgentForm

	// AgentForms overrides AgentForm for the sites whose verifier expects
	// the other form, keyed by the request's "@authority" as signed: the
	// host lowercased, in its ASCII form, with a port only when it is not
	// the scheme's default ("site.example", "site.example:8443").
	AgentForms map[string]AgentForm

	// Label is the signature's label in Signature-Input, Signature and
	// the Dictionary form of Signature-Agent; an RFC 9651 key (lowercase
	// letters, digits, "_", "-", ".", "*"). If empty, DefaultLabel.
	Label string

	// Lifetime is how long a signature stays valid: "expires" is
	// "created" plus Lifetime, rounded up to a whole second. The draft
	// recommends no more than 24 hours. If zero, DefaultLifetime.
	Lifetime time.Duration

	// Now is the signing clock, for "created" and for choosing a key. If
	// nil, time.Now.
	Now func() time.Time
}

// Transport is an http.RoundTripper that signs every request it sends
// with Web Bot Auth (draft-ietf-webbotauth-httpsig-protocol, a profile of
// RFC 9421 HTTP Message Signatures with Ed25519), then sends it on the
// base RoundTripper.
//
// Each request gets a signature of its own, computed over the request as
// it is sent: placed under robots.Transport it signs each robots.txt
// fetch and each redirect hop for its own URL. The signature covers
// "@method", "@authority" and "@path" (RFC 9421 section 2.2), the
// Signature-Agent field naming the key directory (its member, in the
// Dictionary form), and a pay-per-crawl price or payment the request
// offers (crawler-exact-price, crawler-max-price, payment-signature); its
// parameters are
// "created", "expires", "keyid" (the key's JWK thumbprint), a "nonce" of
// 64 random bytes fresh for each request, and "tag" (Tag). The query and
// the body are not covered: a captured signature could be replayed, until
// it expires, against the same method, authority and path with another
// query.
//
// The caller's request is never modified: the Transport signs a clone.
// The Signature, Signature-Input and Signature-Agent fields of the clone
// are the Transport's own; values the caller set there are replaced. A
// request that cannot be signed is not sent; RoundTrip returns the error.
//
// A Transport is safe for concurrent use.
type Transport struct {
	base     http.RoundTripper
	keys     []signingKey // newest NotBefore first
	label    string
	lifetime int64 // seconds
	now      func() time.Time

	// agent is how Signature-Agent is sent in each form, none when
	// Options.Agent is empty; forms the per-authority overrides.
	agent map[AgentForm]agentField
	form  AgentForm
	forms map[string]AgentForm
}

// agentField is Signature-Agent in one form: the field's value, the
// covered component that names it, and its value in the signature base.
type agentField struct {
	field, id, value string
}

// signingKey is a Key with what each signature needs precomputed.
type signingKey struct {
	private   ed25519.PrivateKey
	keyid     string
	notBefore time.Time
	expires   time.Time
}

// NewTransport returns a Transport that signs as opts says and sends on
// base. If base is nil, http.DefaultTransport is used. It reports an
// error for a key that is not a valid Ed25519 key, an Agent that is not
// an absolute https URL, or a Label that is not an RFC 9651 key.
func NewTransport(base http.RoundTripper, opts Options) (*Transport, error) {
	t := &Transport{base: base, label: opts.Label, now: opts.Now}
	if t.label == "" {
		t.label = DefaultLabel
	}
	if !validKey(t.label) {
		return nil, fmt.Errorf("botauth: Label %q is not an RFC 9651 key (lowercase letters, digits, _ - . *)", t.label)
	}
	switch {
	case opts.Lifetime < 0:
		return nil, fmt.Errorf("botauth: negative Lifetime %v", opts.Lifetime)
	case opts.Lifetime == 0:
		opts.Lifetime = DefaultLifetime
	}
	t.lifetime = int64((opts.Lifetime + time.Second - 1) / time.Second)
	for i, k := range opts.Keys {
		if k.Private == nil {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("%w (Keys[%d])", err, i)
		}
		t.keys = append(t.keys, signingKey{private: k.Private, keyid: thumbprint(pub), notBefore: k.NotBefore, expires: k.Expires})
	}
	if len(t.keys) == 0 {
		return nil, errors.New("botauth: Options.Keys holds no key with a private half to sign with")
	}
	slices.SortStableFunc(t.keys, func(a, b signingKey) int { return b.notBefore.Compare(a.notBefore) })
	t.form, t.forms = opts.AgentForm, make(map[string]AgentForm, len(opts.AgentForms))
	if err := checkForm(opts.AgentForm); err != nil {
		return nil, err
	}
	for authority, form := range opts.AgentForms {
		if err := checkForm(form); err != nil {
			return nil, fmt.Errorf("%w (AgentForms[%q])", err, authority)
		}
		t.forms[strings.ToLower(authority)] = form
	}
	if opts.Agent != "" {
		if err := checkAgent(opts.Agent); err != nil {
			return nil, err
		}
		value := sfString(opts.Agent)
		t.agent = map[AgentForm]agentField{
			AgentString:     {field: value, id: componentID("signature-agent"), value: value},
			AgentDictionary: {field: t.label + "=" + value, id: componentID("signature-agent", strParam("key", t.label)), value: value},
		}
	}
	return t, nil
}

// checkForm reports an AgentForm that is neither form.
func checkForm(f AgentForm) error {
	if f != AgentString && f != AgentDictionary {
		return fmt.Errorf("botauth: unknown AgentForm %d", int(f))
	}
	return nil
}

// checkAgent reports whether agent can go in Signature-Agent: an absolute
// https URL (the draft, section "Signature-Agent") that is a valid RFC
// 9651 String.
func checkAgent(agent string) error {
	u, err := url.Parse(agent)
	switch {
	case err != nil:
		return fmt.Errorf("botauth: Agent: %w", err)
	case u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("botauth: Agent %q is not an absolute https URL", agent)
	case !validString(agent) || strings.ContainsAny(agent, " \"\\<>^`{|}"):
		return fmt.Errorf("botauth: Agent %q holds characters a URL does not (RFC 3986); percent-encode them", agent)
	case u.User != nil || u.Fragment != "" || strings.Contains(agent, "#"):
		return fmt.Errorf("botauth: Agent %q carries userinfo or a fragment, which a key directory's URL does not", agent)
	}
	return nil
}

// RoundTrip signs a clone of req and sends it on the base RoundTripper.
// If req cannot be signed it is not sent, its body is closed and the
// error returned.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	out, err := t.Sign(req)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(out)
}

// Sign returns a clone of req carrying a fresh signature, for a caller
// that sends requests some other way than through the Transport. The
// clone shares req's body. req is not modified.
func (t *Transport) Sign(req *http.Request) (*http.Request, error) {
	if req.URL == nil {
		return nil, errors.New("botauth: request has no URL")
	}
	authority, err := authority(req)
	if err != nil {
		return nil, err
	}
	created := t.clock()().Unix()
	expires := created + t.lifetime
	asked, _ := req.Context().Value(answerKey{}).(*challenge)
	keyid := ""
	if asked != nil {
		keyid = asked.keyid
	}
	key, ok := t.key(time.Unix(created, 0), time.Unix(expires, 0), keyid)
	if !ok {
		return nil, fmt.Errorf("%w: at %s, for a signature expiring at %s", ErrNoKey,
			time.Unix(created, 0).UTC().Format(time.RFC3339), time.Unix(expires, 0).UTC().Format(time.RFC3339))
	}
	var random [nonceSize]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, fmt.Errorf("botauth: nonce: %w", err)
	}
	label, tag, nonce := t.label, Tag, base64.StdEncoding.EncodeToString(random[:])
	agent, hasAgent := t.agentFor(authority)
	var components []component
	if asked != nil {
		// The answer to a challenge: signed as the site asked.
		var field string
		if components, field, err = t.askedComponents(req, authority, asked); err != nil {
			return nil, fmt.Errorf("botauth: cannot answer the signature challenge: %w", err)
		}
		if field != "" {
			agent.field = field
		}
		label = asked.label
		if asked.tag != "" {
			tag = asked.tag
		}
		if asked.nonce != "" {
			nonce = asked.nonce
		}
	} else {
		components = t.components(req, authority, agent, hasAgent)
	}
	s := sign(key.private, label, components, []param{
		numParam("created", created),
		numParam("expires", expires),
		strParam("keyid", key.keyid),
		strParam("nonce", nonce),
		strParam("tag", tag),
	})
	out := req.Clone(req.Context())
	if out.Header == nil {
		// net/http sends a request without a header map; its clone has none.
		out.Header = make(http.Header)
	}
	if hasAgent {
		out.Header.Set("Signature-Agent", agent.field)
	} else {
		out.Header.Del("Signature-Agent")
	}
	out.Header.Set("Signature-Input", s.input)
	out.Header.Set("Signature", s.signature)
	return out, nil
}

// components returns what a signature of req sent to authority covers:
// the method, the authority, the path, Signature-Agent in its form, and
// a pay-per-crawl price the request offers.
func (t *Transport) components(req *http.Request, authority string, agent agentField, hasAgent bool) []component {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	components := []component{
		{id: `"@method"`, value: method},
		{id: `"@authority"`, value: authority},
		{id: `"@path"`, value: normalPath(req.URL)},
	}
	if hasAgent {
		components = append(components, component{id: agent.id, value: agent.value})
	}
	return appendCovered(components, req)
}

// appendCovered appends to out the coveredFields req carries that out
// does not cover already.
func appendCovered(out []component, req *http.Request) []component {
	for _, name := range coveredFields {
		id := sfString(strings.ToLower(name))
		if vs := req.Header.Values(name); len(vs) > 0 && !slices.ContainsFunc(out, func(c component) bool { return c.id == id }) {
			out = append(out, component{id: id, value: fieldValue(vs)})
		}
	}
	return out
}

// sentPath returns the path of the request-target net/http sends for u,
// escaped as sent, "/" for none: URL.Opaque when it is set, of which a
// "//host/path" goes out in absolute form, and the path after the host.
func sentPath(u *url.URL) string {
	p := u.EscapedPath()
	if u.Opaque != "" {
		p = u.Opaque
		if rest, ok := strings.CutPrefix(p, "//"); ok {
			p = ""
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				p = rest[i:]
			}
		}
	}
	if p == "" {
		return "/"
	}
	return p
}

// normalPath is the "@path" of a request for u: the path sent, its dot
// segments removed ("/a/./b/../c" is "/a/c"), "%2e" read as a dot, as
// RFC 9421 section 2.2.6 has it normalised (RFC 9110 section 4.2.3) and
// as verifiers that read the URL the WHATWG way (Cloudflare's
// web-bot-auth among them) derive it. Other escapes stay as sent: those
// verifiers keep them.
func normalPath(u *url.URL) string {
	p := sentPath(u)
	if resolved, ok := target.ResolveDots(p); ok {
		return resolved
	}
	return p
}

// coveredFields are the request's header fields a signature covers when
// the request carries them: the prices of Cloudflare's pay per crawl and
// its x402 form's payment, which a site takes only under the crawler's
// signature.
var coveredFields = []string{"Crawler-Exact-Price", "Crawler-Max-Price", "Payment-Signature"}

// fieldValue is a header field's value in a signature base (RFC 9421
// section 2.1): each line's value trimmed, joined by ", ".
func fieldValue(vs []string) string {
	trimmed := make([]string, len(vs))
	for i, v := range vs {
		trimmed[i] = strings.TrimSpace(v)
	}
	return strings.Join(trimmed, ", ")
}

// agentFor returns Signature-Agent as it is sent to authority: in the
// form AgentForms names for it, or else AgentForm.
func (t *Transport) agentFor(authority string) (agentField, bool) {
	if t.agent == nil {
		return agentField{}, false
	}
	form, ok := t.forms[authority]
	if !ok {
		form = t.form
	}
	return t.agent[form], true
}

// key returns the key to sign with for a signature valid from created to
// expires: of those whose window holds both, the newest, or the one of
// id keyid when it is not "".
func (t *Transport) key(created, expires time.Time, keyid string) (signingKey, bool) {
	for _, k := range t.keys {
		if keyid != "" && k.keyid != keyid {
			continue
		}
		if !k.notBefore.IsZero() && created.Before(k.notBefore) {
			continue
		}
		if !k.expires.IsZero() && expires.After(k.expires) {
			continue
		}
		return k, true
	}
	return signingKey{}, false
}

// clock returns the Transport's clock: Options.Now, or time.Now.
func (t *Transport) clock() func() time.Time {
	if t.now != nil {
		return t.now
	}
	return time.Now
}

// authority is the "@authority" of req (RFC 9421 section 2.2.3): the
// host the request is sent to, as net/http writes it (an international
// name in punycode), lowercased, with the scheme's default port removed.
func authority(req *http.Request) (string, error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if host == "" {
		return "", errors.New("botauth: request has no host to sign as @authority")
	}
	// The Host net/http sends: without an IPv6 zone ("[fe80::1%en0]"
	// goes as "[fe80::1]"), an internationalised name in its ASCII
	// (punycode) form.
	host = withoutZone(host)
	ascii, err := httpguts.PunycodeHostPort(host)
	if err != nil {
		return "", fmt.Errorf("botauth: host %q cannot be sent: %v", host, err)
	}
	if !httpguts.ValidHostHeader(ascii) {
		// net/http would send no Host at all: the signature would
		// name an authority the server never sees.
		return "", fmt.Errorf("botauth: host %q is not a valid Host header", host)
	}
	host = authorityOf(ascii, req.URL.Scheme)
	if !validString(host) {
		return "", fmt.Errorf("botauth: host %q is not printable ASCII", host)
	}
	return host, nil
}

// withoutZone returns host without the zone of an IPv6 address in
// brackets, as net/http sends it.
func withoutZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	if j := strings.LastIndex(host[:i], "%"); j >= 0 {
		return host[:j] + host[i:]
	}
	return host
}

// authorityOf returns host (host[:port]) as "@authority" carries it for
// a request of scheme: lowercased, without the scheme's default port.
func authorityOf(host, scheme string) string {
	host = strings.ToLower(host)
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return host
	}
	if p, _ := strconv.Atoi(port); p == 80 && scheme == "http" || p == 443 && scheme == "https" {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}

// CloseIdleConnections closes the idle connections of the base
// RoundTripper, if it has such a method.
func (t *Transport) CloseIdleConnections() {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if c, ok := base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
