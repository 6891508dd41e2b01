package botauth

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WellKnownPath is the path of the key directory a verifier fetches
// (the draft's well-known URI): mount a Directory here on the crawler's
// domain and name "https://<that domain>" + WellKnownPath as
// Options.Agent.
const WellKnownPath = "/.well-known/http-message-signatures-directory"

// DirectoryMediaType is the media type the directory is served with.
const DirectoryMediaType = "application/http-message-signatures-directory+json"

// DirectoryTag is the "tag" of the directory's own signatures.
const DirectoryTag = "http-message-signatures-directory"

// DefaultDirectoryMaxAge is how long verifiers may cache the directory
// when DirectoryOptions.MaxAge is zero. It bounds how long a removed key
// keeps verifying, and how early a new key must be published before its
// NotBefore.
const DefaultDirectoryMaxAge = time.Hour

// DefaultDirectorySignatureLifetime is the lifetime of the directory's
// own signatures when DirectoryOptions.SignatureLifetime is zero.
const DefaultDirectorySignatureLifetime = 24 * time.Hour

// DirectoryOptions configures a Directory. The zero value serves an
// empty key set.
type DirectoryOptions struct {
	// Keys are the keys to publish, usually the same as Options.Keys. A
	// key is published from the start, before its NotBefore, so that
	// verifiers hold it before it signs, and until its Expires. A key
	// with Private also signs the directory response.
	Keys []Key

	// Now is the directory's clock, for which keys are published and the
	// "created" of its signatures. If nil, time.Now.
	Now func() time.Time

	// MaxAge is the Cache-Control max-age of the response. If zero,
	// DefaultDirectoryMaxAge.
	MaxAge time.Duration

	// SignatureLifetime is the time from "created" to "expires" of the
	// directory's signatures, cut short at the signing key's Expires. If
	// zero, DefaultDirectorySignatureLifetime.
	SignatureLifetime time.Duration
}

// Directory is the http.Handler serving the crawler's key directory: a
// JWK Set (RFC 7517 section 5) of its Ed25519 public keys, each with
// "kid" set to its thumbprint, "use" "sig", and "nbf" and "exp" when the
// key has a window, served with DirectoryMediaType.
//
// As the draft's appendix on domain binding recommends, each published
// key with a private half signs the response: one RFC 9421 signature per
// key, labelled "binding", "binding1", "binding2"..., covering
// "@authority";req (the authority the directory was fetched from) and
// "content-digest" (RFC 9530, SHA-256 of the body), with "created",
// "expires", "keyid" and "tag" (DirectoryTag).
//
// It answers GET and HEAD at any path it is mounted on; mount it at
// WellKnownPath. A Directory is safe for concurrent use.
type Directory struct {
	keys     []directoryKey
	now      func() time.Time
	maxAge   int64 // seconds
	lifetime time.Duration
}

type directoryKey struct {
	Key
	pub   ed25519.PublicKey
	keyid string
}

// NewDirectory returns a Directory publishing opts.Keys. It reports an
// error for a key that is not a valid Ed25519 key or a negative
// duration.
func NewDirectory(opts DirectoryOptions) (*Directory, error) {
	if opts.MaxAge < 0 || opts.SignatureLifetime < 0 {
		return nil, fmt.Errorf("botauth: negative MaxAge %v or SignatureLifetime %v", opts.MaxAge, opts.SignatureLifetime)
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = DefaultDirectoryMaxAge
	}
	if opts.SignatureLifetime == 0 {
		opts.SignatureLifetime = DefaultDirectorySignatureLifetime
	}
	d := &Directory{now: opts.Now, maxAge: int64(opts.MaxAge / time.Second), lifetime: opts.SignatureLifetime}
	for i, k := range opts.Keys {
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("%w (Keys[%d])", err, i)
		}
		d.keys = append(d.keys, directoryKey{Key: k, pub: pub, keyid: thumbprint(pub)})
	}
	return d, nil
}

// ServeHTTP writes the key directory as it stands at the Directory's
// clock.
func (d *Directory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "botauth: the key directory answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	clock := time.Now
	if d.now != nil {
		clock = d.now
	}
	now := clock()
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	var signers []directoryKey
	for _, k := range d.keys {
		if !k.Expires.IsZero() && !now.Before(k.Expires) {
			continue // the draft's rotation: remove expired keys
		}
		j := jwk{Kty: "OKP", Crv: "Ed25519", Kid: k.keyid, X: b64url(k.pub), Use: "sig"}
		if !k.NotBefore.IsZero() {
			j.Nbf = k.NotBefore.Unix()
		}
		if !k.Expires.IsZero() {
			j.Exp = k.Expires.Unix()
		}
		set.Keys = append(set.Keys, j)
		if k.Private != nil {
			signers = append(signers, k)
		}
	}
	body, err := json.Marshal(set)
	if err != nil {
		http.Error(w, "botauth: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", DirectoryMediaType)
	h.Set("Cache-Control", "max-age="+strconv.FormatInt(d.maxAge, 10))
	h.Set("Access-Control-Allow-Origin", "*")
	if len(signers) > 0 {
		sum := sha256.Sum256(body)
		digest := "sha-256=" + sfBytes(sum[:])
		h.Set("Content-Digest", digest)
		components := []component{
			{id: flagID("@authority", "req"), value: requestAuthority(r)},
			{id: componentID("content-digest"), value: digest},
		}
		var inputs, sigs []string
		created := now.Unix()
		for i, k := range signers {
			expires := now.Add(d.lifetime)
			if !k.Expires.IsZero() && k.Expires.Before(expires) {
				expires = k.Expires
			}
			s := sign(k.Private, directoryLabel(i), components, []param{
				numParam("created", created),
				numParam("expires", expires.Unix()),
				strParam("keyid", k.keyid),
				strParam("tag", DirectoryTag),
			})
			inputs = append(inputs, s.input)
			sigs = append(sigs, s.signature)
		}
		h.Set("Signature-Input", strings.Join(inputs, ", "))
		h.Set("Signature", strings.Join(sigs, ", "))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// directoryLabel is the label of the directory's i-th signature.
func directoryLabel(i int) string {
	if i == 0 {
		return "binding"
	}
	return "binding" + strconv.Itoa(i)
}

// requestAuthority is the "@authority" of a request the server received:
// its Host, lowercased, without the default port of the scheme it
// arrived on.
func requestAuthority(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return authorityOf(r.Host, scheme)
}
