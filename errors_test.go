package robots

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
)

// TestErrorMessages checks what a DisallowedError says.
func TestErrorMessages(t *testing.T) {
	s := newSite(t, serve(200, "# rules\nUser-agent: ExampleBot\n\nDisallow: /private\n"))
	down := newSite(t, serve(503, ""))
	c := newClock()
	tr := newTestTransport(t, c, Options{})
	client := &http.Client{Transport: tr}
	_, err := client.Get(s.URL + "/private?x=1")
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, ErrDisallowed) {
		t.Fatalf("through http.Client: %v, want a *url.Error matching ErrDisallowed", err)
	}
	var de *DisallowedError
	errors.As(err, &de)
	want := "robots: refused for ExampleBot by Disallow: /private (line 4)"
	if de.Error() != want || de.Token != "ExampleBot" || de.Rule.Line != 4 || de.URL != s.URL+"/private?x=1" {
		t.Errorf("got  %s\nwant %s", de.Error(), want)
	}
	// The *url.Error names the URL; the refusal does not repeat it.
	if want := `Get "` + s.URL + `/private?x=1": ` + want; err.Error() != want {
		t.Errorf("through http.Client:\ngot  %v\nwant %s", err, want)
	}
	err = tr.Check(context.Background(), s.URL+"/x/../private")
	want = "robots: refused for ExampleBot by Disallow: /private (line 4) (resolved as /private)"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = tr.Check(context.Background(), down.URL+"/page")
	want = "robots: refused for ExampleBot: robots.txt unreachable (" + down.URL +
		"/robots.txt answered 503 Service Unavailable); retry after 2025-03-01T12:01:00Z"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
