package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// TestFleetSurvivesEmptyRestart is the fleet operator's case on the real
// clock: 3 members of 4 workers each crawl one origin through one
// redis-server, whose queued workers hold slots several delays ahead;
// the server is killed (SIGKILL) and, a while later, started again empty
// on the same port. While it is down, the fleet's rate over any window of
// members x delay stays within one request per delay (one more for a
// sleep that woke late); from Cooldown plus one delay after the restart,
// no two requests reach the site closer than 0.9 of the delay, whichever
// members sent them; and from Cooldown plus two delays the fleet is back
// to one request per delay (at least three quarters of that, for a loaded
// machine).
func TestFleetSurvivesEmptyRestart(t *testing.T) {
	const (
		// A Crawl-delay of 1, as the operator's case had: the 0.9 of it
		// that arrivals are held to leaves 100 ms for a sender woken late
		// on a loaded machine.
		delay    = time.Second
		cooldown = 500 * time.Millisecond
		members  = 3
		workers  = 4
	)
	srv := redistest.Start(t)
	site := newSite(t)
	sopts := redisstore.Options{Timeout: recoveryTimeout, Cooldown: cooldown}
	fleet := make([]*member, members)
	for i := range fleet {
		fleet[i] = newMember(t, srv.Addr, robots.Options{UserAgent: "ExampleBot", MinDelay: delay}, sopts)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for mi, m := range fleet {
		for w := range workers {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					// Every request has a deadline; one whose slot lies
					// past it fails fast and is tried again.
					rctx, cancel := context.WithTimeout(ctx, 20*delay)
					got := m.get(rctx, fmt.Sprintf("%s/m%d/w%d/%d", site.srv.URL, mi, w, i))
					cancel()
					if got != "sent" {
						time.Sleep(10 * time.Millisecond)
					}
				}
			})
		}
	}
	t.Cleanup(func() { stop(); wg.Wait() })
	eventually(t, "the fleet to send 6 requests", func() bool { return len(site.pages()) >= 6 })
	killed := time.Now()
	srv.Stop()
	time.Sleep(4 * delay)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	end := restarted.Add(cooldown + 2*delay + 10*delay)
	time.Sleep(time.Until(end))
	stop()
	wg.Wait()

	pages := site.pages()
	slices.SortFunc(pages, time.Time.Compare)
	at := func(p time.Time) string {
		return fmt.Sprintf("%v after the restart", p.Sub(restarted).Round(time.Millisecond))
	}
	var during []time.Time
	for _, p := range pages {
		if !p.Before(killed) && p.Before(restarted) {
			during = append(during, p)
		}
	}
	for i := range during {
		n := 0
		for _, q := range during[i:] {
			if q.Sub(during[i]) < members*delay {
				n++
			}
		}
		if n > members+1 {
			t.Errorf("while Redis was down, %d requests within %v from %v after the kill; want at most %d",
				n, members*delay, during[i].Sub(killed).Round(time.Millisecond), members+1)
		}
	}
	settled := restarted.Add(cooldown + delay)
	for k := 1; k < len(pages); k++ {
		if pages[k-1].Before(settled) {
			continue
		}
		if gap := pages[k].Sub(pages[k-1]); gap < delay*9/10 {
			t.Errorf("requests %s and %s reached the site %v apart; want at least %v", at(pages[k-1]), at(pages[k]), gap, delay*9/10)
		}
	}
	back := restarted.Add(cooldown + 2*delay)
	n := 0
	for _, p := range pages {
		if !p.Before(back) && p.Before(end) {
			n++
		}
	}
	if want := int(end.Sub(back)/delay) * 3 / 4; n < want {
		t.Errorf("%d requests from Cooldown plus two delays after the restart to the end (%v); want at least %d, near one a delay",
			n, end.Sub(back), want)
	}
	if t.Failed() {
		dumpArrivals(t, site, restarted)
	}
	t.Logf("%d requests, %d while Redis was down, %d in the %v after the fleet was to be back",
		len(pages), len(during), n, end.Sub(back))
}

// dumpArrivals logs every request s received, with its time from ref
// and its path (which names the member and worker).
func dumpArrivals(t *testing.T, s *site, ref time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range s.arrivals {
		t.Logf("%8v %s", a.Sub(ref).Round(time.Millisecond), s.paths[i])
	}
}
