package botauth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Key is one Ed25519 key of the crawler, with the window in which it is
// valid. The same Keys go to the signer (Options.Keys), which signs with
// the newest key valid at the time, and to the key directory
// (DirectoryOptions.Keys), which publishes each until it expires.
//
// A Key is a value; the signer and the directory copy what they need
// when they are made.
type Key struct {
	// Private signs. The directory needs only the public half: a key
	// directory served apart from the crawler may leave Private nil and
	// set Public. The signer needs Private.
	Private ed25519.PrivateKey

	// Public is the key the directory publishes. If nil, it is derived
	// from Private; if both are set they must match.
	Public ed25519.PublicKey

	// NotBefore is the start of the key's window, published as the JWK
	// member "nbf". The signer does not sign with the key before it, so
	// a key can be published ahead of its use. If zero, the window has
	// no start.
	NotBefore time.Time

	// Expires is the end of the key's window, published as the JWK member
	// "exp". The signer stops using the key once a signature made with it
	// would outlive Expires, and the directory stops publishing it at
	// Expires. If zero, the window has no end.
	Expires time.Time
}

// publicKey returns the key's public half, checking that Private and
// Public agree.
func (k Key) publicKey() (ed25519.PublicKey, error) {
	if k.Private != nil && len(k.Private) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("botauth: Ed25519 private key is %d bytes, want %d", len(k.Private), ed25519.PrivateKeySize)
	}
	if k.Public != nil && len(k.Public) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("botauth: Ed25519 public key is %d bytes, want %d", len(k.Public), ed25519.PublicKeySize)
	}
	switch {
	case k.Private == nil && k.Public == nil:
		return nil, errors.New("botauth: key has neither a private nor a public half")
	case k.Private == nil:
		return k.Public, nil
	}
	pub := k.Private.Public().(ed25519.PublicKey)
	if !bytes.Equal(ed25519.NewKeyFromSeed(k.Private.Seed())[ed25519.SeedSize:], pub) {
		// A private key is its seed and the public half it makes: one
		// whose second half is another's signs what no verifier accepts.
		return nil, errors.New("botauth: Ed25519 private key's public half is not the one its seed makes")
	}
	if k.Public != nil && !bytes.Equal(pub, k.Public) {
		return nil, errors.New("botauth: key's Public is not the public half of its Private")
	}
	return pub, nil
}

// Thumbprint returns the key's JWK SHA-256 thumbprint (RFC 7638 section
// 3, with the members RFC 8037 appendix A.3 names for an Ed25519 key),
// base64url without padding: the keyid its signatures carry and the kid
// the directory publishes. It returns "" for a key without a valid
// public half.
func (k Key) Thumbprint() string {
	pub, err := k.publicKey()
	if err != nil {
		return ""
	}
	return thumbprint(pub)
}

func thumbprint(pub ed25519.PublicKey) string {
	// RFC 7638 section 3.2: the required members in lexicographic order,
	// no whitespace.
	canon := `{"crv":"Ed25519","kty":"OKP","x":"` + b64url(pub) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return b64url(sum[:])
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// ParseKey reads a key in one of the standard encodings: a PEM block
// "PRIVATE KEY" (PKCS #8, RFC 8410) or "PUBLIC KEY" (SPKI), or a JWK
// (RFC 7517, RFC 8037) with kty "OKP" and crv "Ed25519", holding "d" for
// a private key or only "x" for a public one. A JWK's "nbf" and "exp",
// when present, become NotBefore and Expires.
func ParseKey(data []byte) (Key, error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) {
		return parseJWK(trimmed)
	}
	block, _ := pem.Decode(trimmed)
	if block == nil {
		return Key{}, errors.New("botauth: key is neither a PEM block nor a JWK")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return Key{}, fmt.Errorf("botauth: PKCS #8 key: %w", err)
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return Key{}, fmt.Errorf("botauth: PKCS #8 key is a %T, not an Ed25519 key", k)
		}
		return Key{Private: priv}, nil
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return Key{}, fmt.Errorf("botauth: public key: %w", err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return Key{}, fmt.Errorf("botauth: public key is a %T, not an Ed25519 key", k)
		}
		return Key{Public: pub}, nil
	default:
		return Key{}, fmt.Errorf("botauth: PEM block %q is not a PRIVATE KEY (PKCS #8) or PUBLIC KEY", block.Type)
	}
}

// jwk is the JSON form of an Ed25519 key, members in the order the
// directory writes them.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	X   string `json:"x"`
	D   string `json:"d,omitempty"`
	Use string `json:"use,omitempty"`
	Nbf int64  `json:"nbf,omitempty"`
	Exp int64  `json:"exp,omitempty"`
}

func parseJWK(data []byte) (Key, error) {
	var j jwk
	if err := json.Unmarshal(data, &j); err != nil {
		return Key{}, fmt.Errorf("botauth: JWK: %w", err)
	}
	if j.Kty != "OKP" || j.Crv != "Ed25519" {
		return Key{}, fmt.Errorf("botauth: JWK is kty %q crv %q, want an Ed25519 key (kty \"OKP\", crv \"Ed25519\")", j.Kty, j.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(j.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return Key{}, errors.New("botauth: JWK member \"x\" is not a base64url Ed25519 public key")
	}
	k := Key{Public: ed25519.PublicKey(x)}
	if j.D != "" {
		d, err := base64.RawURLEncoding.DecodeString(j.D)
		if err != nil || len(d) != ed25519.SeedSize {
			return Key{}, errors.New("botauth: JWK member \"d\" is not a base64url Ed25519 private key")
		}
		k.Private = ed25519.NewKeyFromSeed(d)
		if _, err := k.publicKey(); err != nil {
			return Key{}, errors.New("botauth: JWK members \"x\" and \"d\" are not one key pair")
		}
	}
	if j.Nbf != 0 {
		k.NotBefore = time.Unix(j.Nbf, 0)
	}
	if j.Exp != 0 {
		k.Expires = time.Unix(j.Exp, 0)
	}
	return k, nil
}
