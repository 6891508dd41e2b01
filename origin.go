package robots

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errNoHost is returned for an http or https URL without a host.
var errNoHost = errors.New("robots: URL has no host")

// isHTTP reports whether scheme is one that robots.txt governs.
func isHTTP(scheme string) bool {
	return scheme == "http" || scheme == "https" ||
		strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// originOf returns the origin whose robots.txt governs u, as
// scheme://host[:port]: RFC 9309 section 2.3 scopes a robots.txt file to
// its scheme, host and port. The scheme and host are lower-cased, an
// internationalised host is written in its ASCII (punycode) form and a
// default port is dropped, so that every spelling of one origin shares one
// robots.txt.
func originOf(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	if host == "" {
		return "", errNoHost
	}
	if strings.Contains(host, ":") {
		host = "[" + strings.ToLower(host) + "]"
	} else {
		var err error
		if host, err = asciiHost(host); err != nil {
			return "", err
		}
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return "", fmt.Errorf("robots: invalid port %q", p)
		}
		if !(scheme == "http" && n == 80 || scheme == "https" && n == 443) {
			host += ":" + strconv.FormatUint(n, 10)
		}
	}
	// url.URL escapes what a host cannot hold literally (an IPv6 zone's
	// "%", say), so the origin parses back to itself.
	return (&url.URL{Scheme: scheme, Host: host}).String(), nil
}

// asciiHost lower-cases host and writes each non-ASCII label as "xn--"
// followed by its punycode (RFC 3492), the form DNS and the Host header
// use (RFC 5891 section 4.4).
func asciiHost(host string) (string, error) {
	if !utf8.ValidString(host) {
		return "", fmt.Errorf("robots: host %q is not valid UTF-8", host)
	}
	host = strings.ToLower(host)
	if isASCII(host) {
		return host, nil
	}
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if isASCII(l) {
			continue
		}
		enc, err := punycode(l)
		if err != nil {
			return "", fmt.Errorf("robots: host %q: %w", host, err)
		}
		labels[i] = "xn--" + enc
	}
	return strings.Join(labels, "."), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Punycode parameters, RFC 3492 section 5.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	// maxLabel is the longest DNS label (RFC 1035 section 2.3.4); it also
	// keeps the encoder's arithmetic far from overflow.
	maxLabel = 63
)

// punycode encodes one label (RFC 3492 section 6.3).
func punycode(label string) (string, error) {
	runes := []rune(label)
	if len(runes) > maxLabel {
		return "", errors.New("label longer than 63 characters")
	}
	out := make([]byte, 0, 2*len(runes))
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias := rune(pcInitialN), 0, pcInitialBias
	for h := basic; h < len(runes); {
		m := rune(utf8.MaxRune + 1)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (h + 1)
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := min(max(k-bias, pcTMin), pcTMax)
				if q < t {
					break
				}
				out = append(out, pcDigit(t+(q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out = append(out, pcDigit(q))
			bias = pcAdapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return string(out), nil
}

func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// pcAdapt is the bias adaptation function of RFC 3492 section 6.1.
func pcAdapt(delta, points int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / points
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

// lookupOrigin returns the in-memory origin of u. An origin already
// spelled canonically, the usual case, is looked up without building its
// key as a string.
func (t *Transport) lookupOrigin(u *url.URL) (*origin, error) {
	var buf [128]byte
	if key, ok := appendCanonicalOrigin(buf[:0], u); ok {
		return t.origins.get(key), nil
	}
	key, err := originOf(u)
	if err != nil {
		return nil, err
	}
	return t.origins.get([]byte(key)), nil
}

// appendCanonicalOrigin appends the origin of u to dst when u spells it as
// originOf would: a lower-case http or https scheme, a host of lower-case
// ASCII letters, digits, '.' and '-', and no port or one without leading
// zeros that is not the scheme's default. Otherwise it reports false, and
// originOf must build the origin.
func appendCanonicalOrigin(dst []byte, u *url.URL) ([]byte, bool) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return dst, false
	}
	host, port, hasPort := u.Host, "", false
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, port, hasPort = host[:i], host[i+1:], true
	}
	if host == "" {
		return dst, false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return dst, false
		}
	}
	if hasPort {
		n := 0
		for i := 0; i < len(port); i++ {
			if c := port[i]; '0' <= c && c <= '9' && i < 5 {
				n = n*10 + int(c-'0')
			} else {
				return dst, false
			}
		}
		if port == "" || port[0] == '0' || n > 65535 ||
			u.Scheme == "http" && n == 80 || u.Scheme == "https" && n == 443 {
			return dst, false
		}
	}
	dst = append(dst, u.Scheme...)
	dst = append(dst, "://"...)
	return append(dst, u.Host...), true
}
