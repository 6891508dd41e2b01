package botauth_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The tests' own verifier: an independent reading of what a server
// receives, rebuilt from the wire form as RFC 9421 section 3.2 says, so
// that the Go tests check signatures where Node.js is missing. The npm
// verifier (npm_test.go) checks the same requests where it is present.

// received is a request as the server saw it.
type received struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	host    string
	path    string
}

// recorder is a handler wrapper that keeps every request it serves.
type recorder struct {
	mu   sync.Mutex // protects reqs
	reqs []received
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := received{Method: r.Method, URL: "http://" + r.Host + r.URL.RequestURI(), Headers: map[string]string{},
			host: r.Host, path: r.URL.EscapedPath()}
		for _, name := range []string{"Signature", "Signature-Input", "Signature-Agent", "Crawler-Exact-Price", "Crawler-Max-Price"} {
			if v := r.Header.Get(name); v != "" {
				got.Headers[strings.ToLower(name)] = v
			}
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, got)
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) requests() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.reqs...)
}

// verified is what a valid signature covered.
type verified struct {
	label, keyid, nonce, agent string
	created, expires           time.Time
	covered                    map[string]string // component id → value
}

// verifyRequest checks r's signature with the key keys holds for its
// keyid, at now.
func verifyRequest(r received, keys map[string]ed25519.PublicKey, now time.Time) (verified, error) {
	label, inner, ok := strings.Cut(r.Headers["signature-input"], "=")
	if !ok || !strings.HasPrefix(inner, "(") {
		return verified{}, fmt.Errorf("Signature-Input %q", r.Headers["signature-input"])
	}
	end := strings.IndexByte(inner, ')')
	ids := strings.Fields(inner[1:end])
	params := map[string]string{}
	for _, p := range strings.Split(inner[end+1:], ";")[1:] {
		name, value, _ := strings.Cut(p, "=")
		params[name] = strings.Trim(value, `"`)
	}
	v := verified{label: label, keyid: params["keyid"], nonce: params["nonce"], covered: map[string]string{}}
	var base strings.Builder
	for _, id := range ids {
		var value string
		switch {
		case id == `"@method"`:
			value = r.Method
		case id == `"@authority"`:
			value = strings.ToLower(r.host)
		case id == `"@path"`:
			value = r.path
		case id == `"@query"`:
			u, _ := url.Parse(r.URL)
			value = "?" + u.RawQuery
		case id == `"@request-target"`:
			u, _ := url.Parse(r.URL)
			value = u.RequestURI()
		case id == `"@scheme"`:
			value = "http"
		case id == `"@target-uri"`:
			u, _ := url.Parse(r.URL)
			value = "http://" + strings.ToLower(r.host) + u.RequestURI()
		case id == `"signature-agent"`:
			value = r.Headers["signature-agent"]
			v.agent = strings.Trim(value, `"`)
		case strings.HasPrefix(id, `"signature-agent";key=`):
			member := strings.Trim(strings.TrimPrefix(id, `"signature-agent";key=`), `"`)
			key, val, _ := strings.Cut(r.Headers["signature-agent"], "=")
			if strings.HasPrefix(r.Headers["signature-agent"], `"`) {
				key = ""
			}
			if key != member {
				return v, fmt.Errorf("Signature-Agent %q has no member %q", r.Headers["signature-agent"], member)
			}
			value = val
			v.agent = strings.Trim(val, `"`)
		case strings.HasPrefix(id, `"`) && strings.HasSuffix(id, `"`) && !strings.HasPrefix(id, `"@`):
			var ok bool
			if value, ok = r.Headers[strings.Trim(id, `"`)]; !ok {
				return v, fmt.Errorf("covered field %s is not in the request", id)
			}
		default:
			return v, fmt.Errorf("unexpected component %s", id)
		}
		v.covered[id] = value
		fmt.Fprintf(&base, "%s: %s\n", id, value)
	}
	base.WriteString(`"@signature-params": ` + inner)
	created, err1 := strconv.ParseInt(params["created"], 10, 64)
	expires, err2 := strconv.ParseInt(params["expires"], 10, 64)
	if err1 != nil || err2 != nil {
		return v, fmt.Errorf("created %q expires %q", params["created"], params["expires"])
	}
	v.created, v.expires = time.Unix(created, 0), time.Unix(expires, 0)
	sig := r.Headers["signature"]
	if !strings.HasPrefix(sig, label+"=:") || !strings.HasSuffix(sig, ":") {
		return v, fmt.Errorf("Signature %q is not for label %q", sig, label)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(sig, label+"=:"), ":"))
	if err != nil {
		return v, err
	}
	pub, ok := keys[v.keyid]
	switch {
	case params["tag"] != "web-bot-auth":
		return v, fmt.Errorf("tag %q", params["tag"])
	case !ok:
		return v, fmt.Errorf("unknown key %s", v.keyid)
	case now.Before(v.created) || now.After(v.expires):
		return v, fmt.Errorf("signature valid %v to %v, not at %v", v.created, v.expires, now)
	case !ed25519.Verify(pub, []byte(base.String()), raw):
		return v, fmt.Errorf("signature does not verify over\n%s", base.String())
	}
	return v, nil
}
