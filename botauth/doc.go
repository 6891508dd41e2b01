// Package botauth lets a crawler prove who it is with Web Bot Auth: the
// IETF webbotauth working group's draft-ietf-webbotauth-httpsig-protocol
// (-01), a profile of HTTP Message Signatures (RFC 9421) with Ed25519
// keys, which Cloudflare's verified bots and other site operators check.
//
// Transport is an http.RoundTripper that signs every request it sends.
// Placed under robots.Transport it signs each robots.txt fetch and each
// redirect hop too, each for the URL actually sent, with a fresh nonce:
//
//	signer, err := botauth.NewTransport(http.DefaultTransport, botauth.Options{
//		Keys:  []botauth.Key{key},
//		Agent: "https://crawler.example" + botauth.WellKnownPath,
//	})
//	client := &http.Client{Transport: robots.NewTransport(signer, robots.Options{UserAgent: "ExampleBot/1.0"})}
//
// Directory is the http.Handler that serves the crawler's public keys, a
// JWK Set, at WellKnownPath on the crawler's domain, where verifiers
// fetch them; it signs its own response with each key, as the draft
// recommends. Keys carry a validity window (Key.NotBefore, Key.Expires)
// so that one list of keys drives a rotation on both sides: the new key
// is published before it signs, the old one until it expires.
//
// Keys are read from a PKCS #8 PEM or a JWK with ParseKey. Each key's id
// is its JWK SHA-256 thumbprint (RFC 7638, RFC 8037).
//
// Verifiers expect one of two wire forms of Signature-Agent. By default
// it goes out as a bare RFC 9651 String (AgentString), which Cloudflare's
// production verifier and the web-bot-auth package on npm accept;
// AgentDictionary is the working group's form, for the sites whose
// verifier follows draft -01, chosen for all (Options.AgentForm) or per
// site (Options.AgentForms). The reference page docs/botauth.md in the
// module says which verifiers expect which, and what a site operator
// checks.
package botauth
