package explorer

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// guardHost refuses, with 403, every request whose Host header does not
// name the address its connection came in on. A web page the user visits
// could otherwise drive the API through DNS rebinding: its own host name,
// re-pointed at 127.0.0.1, would reach this server as same-origin, and
// /api/fetch would fetch from this machine for it. A name other than
// "localhost" is never accepted, so the page is opened by address
// (http://127.0.0.1:8080/) or as localhost on a loopback address.
func guardHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !hostMatches(r.Host, local) {
			writeError(w, &apiError{http.StatusForbidden, fmt.Sprintf(
				"Host %q is not the address this explorer listens on: open it by its address, as printed when it started (this refuses DNS rebinding)",
				r.Host)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostMatches reports whether host, a Host header, names local, the
// address a connection came in on: the same IP address, or localhost when
// it is a loopback address, and the same port (80 when host has none).
func hostMatches(host string, local net.Addr) bool {
	tcp, ok := local.(*net.TCPAddr)
	if !ok {
		return false
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), "80"
	}
	if port != strconv.Itoa(tcp.Port) {
		return false
	}
	want, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return false
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		return ip.Unmap() == want.Unmap()
	}
	return strings.EqualFold(name, "localhost") && want.IsLoopback()
}
