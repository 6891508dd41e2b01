package redisstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

func TestMain(m *testing.M) {
	// The client's own log lines about a stopped server would drown the
	// output of the tests that stop it.
	redis.SetLogger(quiet{})
	redistest.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// newStore starts a redis-server for t and returns a client on it and a
// Store with opts over that client.
func newStore(t *testing.T, opts redisstore.Options) (*redistest.Server, *redis.Client, *redisstore.Store) {
	t.Helper()
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	return srv, client, redisstore.New(client, opts)
}

const origin = "https://site.example:443"

// TestKeys checks the key layout: versioned, prefixed, the origin as the
// Cluster hash tag of each of its keys, and an expiry on every key, each
// the time its docs give: a record's TTL, a lease's ttl, a slot key a
// minute past the latest of its last slot (its spread included), its
// pause and its members' windows.
func TestKeys(t *testing.T) {
	const (
		paused = "https://paused.example"
		spread = "https://spread.example"
		long   = "https://long.example"
		later  = "https://paused-later.example"
	)
	_, client, s := newStore(t, redisstore.Options{Prefix: "fleet:", TTL: time.Hour})
	ctx := context.Background()
	now := time.Now()
	for _, k := range []robots.RecordKey{{Origin: origin}, {Origin: origin, Variant: "examplebot"}} {
		if _, err := s.Swap(ctx, k, nil, []byte("a")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Lease(ctx, origin, "tok", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveSlot(ctx, origin, robots.SlotRequest{Member: "m", Now: now, Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	// A pause alone keeps its slot key a minute past its end, and a slot
	// reserved with a spread is kept a minute past the spread.
	if err := s.Pause(ctx, paused, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveSlot(ctx, spread, robots.SlotRequest{Member: "m", Now: now, Interval: time.Second, Spread: 90 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// A pause lengthens the life of a key that a slot made shorter.
	if _, err := s.ReserveSlot(ctx, later, robots.SlotRequest{Member: "m", Now: now, Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(ctx, later, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// A later call, refused or with a shorter delay, never shortens the
	// key's life: the pause, and a member's long window, keep it.
	if _, err := s.ReserveSlot(ctx, paused, robots.SlotRequest{Member: "m", Now: now, Interval: time.Second, Limit: now}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []robots.SlotRequest{
		{Member: "slow", Now: now, Interval: 5 * time.Minute},
		{Member: "fast", Now: now, Interval: time.Second, Limit: now},
	} {
		if _, err := s.ReserveSlot(ctx, long, req); err != nil {
			t.Fatal(err)
		}
	}
	// Nor does a short pause.
	if err := s.Pause(ctx, long, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		"fleet:rs1:{" + origin + "}:record":            time.Hour,
		"fleet:rs1:{" + origin + "}:record examplebot": time.Hour,
		"fleet:rs1:{" + origin + "}:lease":             time.Minute,
		"fleet:rs1:{" + origin + "}:slot":              redisstore.MemberWindow + time.Minute,
		"fleet:rs1:{" + paused + "}:slot":              time.Hour + time.Minute,
		"fleet:rs1:{" + later + "}:slot":               time.Hour + time.Minute,
		"fleet:rs1:{" + spread + "}:slot":              90*time.Second + time.Second + time.Minute,
		"fleet:rs1:{" + long + "}:slot":                robots.MemberWindowFor(5*time.Minute) + time.Minute,
	}
	keys, err := client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(want) {
		t.Errorf("keys = %q; want %d keys", keys, len(want))
	}
	for key, ttl := range want {
		got, err := client.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		// PTTL is below the TTL by the time since the write.
		if got <= ttl-10*time.Second || got > ttl {
			t.Errorf("PTTL(%q) = %v; want just under %v", key, got, ttl)
		}
	}
}

func TestSwap(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	ctx := context.Background()
	key := robots.RecordKey{Origin: origin}
	steps := []struct {
		name     string
		old, new string
		absent   bool // old is nil
		stored   bool
	}{
		{name: "absent, expecting absent", absent: true, new: "v1", stored: true},
		{name: "present, expecting absent", absent: true, new: "v2", stored: false},
		{name: "present, expecting another value", old: "v0", new: "v2", stored: false},
		{name: "present, expecting it", old: "v1", new: "v2", stored: true},
		{name: "expecting the empty value", old: "", new: "v3", stored: false},
	}
	for _, st := range steps {
		var old []byte
		if !st.absent {
			old = []byte(st.old)
		}
		stored, err := s.Swap(ctx, key, old, []byte(st.new))
		if err != nil || stored != st.stored {
			t.Fatalf("%s: Swap = %v, %v; want %v", st.name, stored, err, st.stored)
		}
	}
	if got, found, err := s.Load(ctx, key); err != nil || !found || string(got) != "v2" {
		t.Errorf("final value = %q, %v, %v; want v2", got, found, err)
	}
	if _, found, err := s.Load(ctx, robots.RecordKey{Origin: origin, Variant: "v"}); err != nil || found {
		t.Errorf("Load of another variant = %v, %v; want none", found, err)
	}
}

// TestSwapMerges has writers that load, change and swap: none of their
// changes is lost, as none would be with the transport's record merge.
func TestSwapMerges(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	ctx := context.Background()
	key := robots.RecordKey{Origin: origin}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				for {
					old, _, err := s.Load(ctx, key)
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(string(old))
					stored, err := s.Swap(ctx, key, old, []byte(strconv.Itoa(n+1)))
					if err != nil {
						t.Error(err)
						return
					}
					if stored {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if got, _, _ := s.Load(ctx, key); string(got) != strconv.Itoa(writers*each) {
		t.Errorf("counter = %s; want %d", got, writers*each)
	}
}

func TestLease(t *testing.T) {
	_, client, s := newStore(t, redisstore.Options{Prefix: "p:"})
	ctx := context.Background()
	lease := func(token string, want bool) {
		t.Helper()
		held, err := s.Lease(ctx, origin, token, 50*time.Millisecond)
		if err != nil || held != want {
			t.Fatalf("Lease(%s) = %v, %v; want %v", token, held, err, want)
		}
	}
	lease("a", true)
	lease("b", false)
	if err := s.Unlease(ctx, origin, "b"); err != nil {
		t.Fatal(err)
	}
	lease("b", false) // b never held it: a still does
	if err := s.Unlease(ctx, origin, "a"); err != nil {
		t.Fatal(err)
	}
	lease("b", true)

	// A holder that never gives the lease up loses it when it expires.
	deadline := time.Now().Add(10 * time.Second)
	for client.Exists(ctx, "p:rs1:{"+origin+"}:lease").Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("lease still held 10 s after its 50 ms expiry")
		}
		time.Sleep(10 * time.Millisecond)
	}
	lease("c", true)
}

func TestReserveSlot(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
	sec := time.Second
	type step struct {
		name string
		do   func() (time.Time, bool, error)
		at   time.Time
		ok   bool
	}
	reserve := func(now time.Time, interval time.Duration, limit time.Time) func() (time.Time, bool, error) {
		return func() (time.Time, bool, error) { return reserveSlot(s, origin, now, interval, limit) }
	}
	steps := []step{
		{name: "first slot is now, to the microsecond", do: reserve(t0, sec, time.Time{}), at: t0, ok: true},
		{name: "next is one interval later", do: reserve(t0, sec, time.Time{}), at: t0.Add(sec), ok: true},
		{name: "past the limit reserves nothing", do: reserve(t0, sec, t0.Add(sec)), at: t0.Add(2 * sec), ok: false},
		{name: "within the limit", do: reserve(t0, sec, t0.Add(2*sec)), at: t0.Add(2 * sec), ok: true},
		{name: "a later now after a quiet spell", do: reserve(t0.Add(time.Hour), sec, time.Time{}), at: t0.Add(time.Hour), ok: true},
		{name: "cancelled last slot is taken again", do: func() (time.Time, bool, error) {
			if err := s.CancelSlot(ctx, origin, t0.Add(time.Hour), sec); err != nil {
				return time.Time{}, false, err
			}
			return reserveSlot(s, origin, t0.Add(time.Hour), sec, time.Time{})
		}, at: t0.Add(time.Hour), ok: true},
		{name: "cancelling a slot that is not the last changes nothing", do: func() (time.Time, bool, error) {
			if err := s.CancelSlot(ctx, origin, t0, sec); err != nil {
				return time.Time{}, false, err
			}
			return reserveSlot(s, origin, t0.Add(time.Hour), sec, time.Time{})
		}, at: t0.Add(time.Hour + sec), ok: true},
		{name: "a pause holds the next slot", do: func() (time.Time, bool, error) {
			if err := s.Pause(ctx, origin, t0.Add(2*time.Hour)); err != nil {
				return time.Time{}, false, err
			}
			return reserveSlot(s, origin, t0.Add(time.Hour), sec, time.Time{})
		}, at: t0.Add(2 * time.Hour), ok: true},
		{name: "a shorter pause does not shorten it", do: func() (time.Time, bool, error) {
			if err := s.Pause(ctx, origin, t0.Add(time.Hour)); err != nil {
				return time.Time{}, false, err
			}
			return reserveSlot(s, origin, t0.Add(time.Hour), 0, time.Time{})
		}, at: t0.Add(2 * time.Hour), ok: true},
	}
	for _, st := range steps {
		at, ok, err := st.do()
		if err != nil || !at.Equal(st.at) || ok != st.ok {
			t.Fatalf("%s: got %v, %v, %v; want %v, %v", st.name, at, ok, err, st.at, st.ok)
		}
	}
}

// reserveSlot reserves a slot of origin as member "a", from now on.
func reserveSlot(s *redisstore.Store, origin robots.OriginKey, now time.Time, interval time.Duration, limit time.Time) (time.Time, bool, error) {
	slot, err := s.ReserveSlot(context.Background(), origin, robots.SlotRequest{Member: "a", Now: now, Interval: interval, Limit: limit})
	return slot.At, slot.Reserved, err
}

// TestReserveSlotNotBefore checks that a slot is never before the
// member's own next one, even when the store holds no slot (a Redis that
// restarted empty), nor before the fleet's.
func TestReserveSlotNotBefore(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, st := range []struct {
		name      string
		notBefore time.Time
		want      time.Time
	}{
		{"an empty store, from the member's own next slot", t0.Add(3 * time.Second), t0.Add(3 * time.Second)},
		{"the fleet's next slot is later", t0.Add(time.Second), t0.Add(4 * time.Second)},
		{"a NotBefore before Now counts from Now", t0.Add(-time.Hour), t0.Add(5 * time.Second)},
	} {
		slot, err := s.ReserveSlot(ctx, origin, robots.SlotRequest{Member: "a", Now: t0, NotBefore: st.notBefore, Interval: time.Second})
		if err != nil || !slot.At.Equal(st.want) || !slot.Reserved {
			t.Fatalf("%s: %+v, %v; want %v reserved", st.name, slot, err, st.want)
		}
	}
}

// TestReserveSlotCountsMembers checks the heartbeat a reservation is: the
// members that reserved a slot of the origin within the window are
// counted, each once, the caller included; one gone quiet drops out once
// the window has passed its last slot, and other origins count apart.
func TestReserveSlotCountsMembers(t *testing.T) {
	_, client, s := newStore(t, redisstore.Options{})
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	reserve := func(member string, origin robots.OriginKey, now time.Time) int {
		t.Helper()
		slot, err := s.ReserveSlot(ctx, origin, robots.SlotRequest{Member: member, Now: now, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return slot.Members
	}
	steps := []struct {
		member string
		origin robots.OriginKey
		now    time.Time
		want   int
	}{
		{"a", origin, t0, 1},
		{"b", origin, t0, 2},
		{"a", origin, t0, 2},
		{"c", origin, t0.Add(time.Second), 3},
		{"a", "https://other.example", t0, 1},
		// b's last slot was t0+1s; a and c reserved up to t0+3s, a's
		// window counting from its later slot.
		{"d", origin, t0.Add(time.Second + redisstore.MemberWindow + time.Millisecond), 3},
		{"a", origin, t0.Add(time.Second + redisstore.MemberWindow + time.Millisecond), 3},
		{"a", origin, t0.Add(time.Hour), 1},
	}
	for i, st := range steps {
		if got := reserve(st.member, st.origin, st.now); got != st.want {
			t.Errorf("step %d: %s on %s: %d members; want %d", i, st.member, st.origin, got, st.want)
		}
	}
	// The members whose window passed are gone from the store, not only
	// from the count: each member is kept as its name's 32-bit length and
	// its name.
	state, err := client.Get(ctx, "rs1:{"+string(origin)+"}:slot").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b", "c", "d"} {
		if kept := strings.Contains(state, "\x00\x00\x00\x01"+m); kept != (m == "a") {
			t.Errorf("member %s kept in the store: %v; want only a's (state %q)", m, kept, state)
		}
	}
}

// TestNextSlotPause checks that a pause any member stored is read back
// by NextSlot with no interval, and that an origin never paused is free
// now.
func TestNextSlotPause(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	ctx := context.Background()
	now := time.Now().Truncate(time.Microsecond)
	until := now.Add(time.Hour)
	if got, err := s.NextSlot(ctx, origin, robots.SlotRequest{Now: now}); err != nil || !got.Equal(now) {
		t.Fatalf("NextSlot before a pause = %v, %v; want now (%v)", got, err, now)
	}
	if err := s.Pause(ctx, origin, until); err != nil {
		t.Fatal(err)
	}
	if got, err := s.NextSlot(ctx, origin, robots.SlotRequest{Now: now}); err != nil || !got.Equal(until) {
		t.Fatalf("NextSlot = %v, %v; want %v", got, err, until)
	}
}

// TestReserveSlotConcurrent has many reservers at once: every slot is
// distinct and one interval from the next.
func TestReserveSlotConcurrent(t *testing.T) {
	// A generous Timeout: 200 calls at once under -race on a loaded
	// machine can outlast the default second, and this test is about the
	// slots, not the Timeout.
	_, _, s := newStore(t, redisstore.Options{Timeout: time.Minute})
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 200
	var mu sync.Mutex
	seen := map[time.Time]bool{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			at, ok, err := reserveSlot(s, origin, t0, time.Millisecond, time.Time{})
			if err != nil || !ok {
				t.Error(at, ok, err)
				return
			}
			mu.Lock()
			seen[at] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	for i := range n {
		if at := t0.Add(time.Duration(i) * time.Millisecond); !seen[at] {
			t.Errorf("slot %v not reserved; %d distinct slots", at, len(seen))
		}
	}
}

// logBuffer collects log lines for a test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.FieldsFunc(b.buf.String(), func(r rune) bool { return r == '\n' })
}

// TestUnavailable stops Redis under a Store: every call answers at once
// with a miss or ErrUnavailable, the cooldown keeps later calls off Redis,
// failures are counted and logged once per LogInterval, naming their
// cause, and the Store
// recovers when Redis returns.
func TestUnavailable(t *testing.T) {
	logs := &logBuffer{}
	srv, _, s := newStore(t, redisstore.Options{
		Cooldown: time.Hour,
		Logger:   slog.New(slog.NewTextHandler(logs, nil)),
	})
	ctx := context.Background()
	key := robots.RecordKey{Origin: origin}
	if _, err := s.Swap(ctx, key, nil, []byte("v")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()

	if v, found, err := s.Load(ctx, key); found || !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Load with Redis down = %q, %v, %v; want ErrUnavailable", v, found, err)
	}
	after := s.Stats()
	if after.Errors != 1 || after.Fallbacks != 1 {
		t.Errorf("Stats after one failed call = %+v; want 1 error, 1 fallback", after)
	}
	// The line names the cause go-redis saw, not only the deadline it
	// retried the dial until.
	if got := strings.Join(logs.lines(), "\n"); !strings.Contains(got, "connection refused") {
		t.Errorf("log after Redis stopped = %q; want the cause, connection refused", got)
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"lease", func() error { _, err := s.Lease(ctx, origin, "t", time.Second); return err }},
		{"unlease", func() error { return s.Unlease(ctx, origin, "t") }},
		{"swap", func() error { _, err := s.Swap(ctx, robots.RecordKey{Origin: origin}, nil, []byte("x")); return err }},
		{"load", func() error { _, _, err := s.Load(ctx, robots.RecordKey{Origin: origin}); return err }},
		{"reserve", func() error {
			_, _, err := reserveSlot(s, origin, time.Now(), time.Second, time.Time{})
			return err
		}},
		{"cancel", func() error { return s.CancelSlot(ctx, origin, time.Now(), time.Second) }},
		{"pause", func() error { return s.Pause(ctx, origin, time.Now()) }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, redisstore.ErrUnavailable) {
			t.Errorf("%s with Redis down: err = %v; want ErrUnavailable", c.name, err)
		}
	}
	if st := s.Stats(); st.Errors != 1 || st.Fallbacks != 1+int64(len(calls)) {
		t.Errorf("Stats during the cooldown = %+v; want no new error, every call a fallback", st)
	}
	if n := len(logs.lines()); n != 1 {
		t.Errorf("log has %d lines; want 1 (rate-limited): %q", n, logs.lines())
	}

	// Once Redis is back, a Store past its cooldown uses it again.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(ctx, origin, time.Now()); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("within the cooldown: err = %v; want ErrUnavailable", err)
	}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	s2 := redisstore.New(client, redisstore.Options{Cooldown: -1, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	srv.Stop()
	if _, found, err := s2.Load(ctx, key); found || err == nil {
		t.Fatalf("Load with Redis down = %v, %v; want an error", found, err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if ok, err := s2.Swap(ctx, key, nil, []byte("back")); !ok || err != nil {
		t.Fatalf("Swap after Redis returned (empty) = %v, %v; want stored", ok, err)
	}
	if v, found, err := s2.Load(ctx, key); !found || err != nil || string(v) != "back" {
		t.Errorf("Load after Redis returned = %q, %v, %v; want back", v, found, err)
	}
	if last := logs.lines()[len(logs.lines())-1]; !strings.Contains(last, "available again") {
		t.Errorf("last log line = %q; want the recovery", last)
	}
}

// TestTimeout points a Store at a server that accepts connections and
// never answers: each call returns ErrUnavailable after Options.Timeout,
// bounded by its context (the client has ContextTimeoutEnabled, as New
// asks); and New warns about a client without it.
func TestTimeout(t *testing.T) {
	addr := silentRedis(t)
	// Without ContextTimeoutEnabled the client would wait its own 3 s
	// ReadTimeout, and New says so.
	logs := &logBuffer{}
	loose := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { loose.Close() })
	redisstore.New(loose, redisstore.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if got := strings.Join(logs.lines(), "\n"); !strings.Contains(got, "ContextTimeoutEnabled") {
		t.Errorf("New on a client without ContextTimeoutEnabled logged %q; want a warning naming it", got)
	}
	// The client's own timeouts are a minute: a call waiting for them,
	// not for Timeout, would pass any ceiling a paused machine needs.
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	t.Cleanup(func() { client.Close() })
	const timeout = 50 * time.Millisecond
	s := redisstore.New(client, redisstore.Options{Timeout: timeout, Cooldown: -1})
	for _, name := range []string{"load", "lease"} {
		start := time.Now()
		var err error
		if name == "load" {
			_, _, err = s.Load(context.Background(), robots.RecordKey{Origin: "k"})
		} else {
			_, err = s.Lease(context.Background(), "k", "t", time.Second)
		}
		if !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v; want ErrUnavailable and DeadlineExceeded", name, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s took %v; want about %v, not the client's minute", name, d, timeout)
		}
	}
}

// TestCallerCancel: a caller that gives up is not a Redis failure.
func TestCallerCancel(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{Cooldown: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Lease(ctx, "k", "t", time.Second); !errors.Is(err, context.Canceled) || errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Lease with a cancelled context: err = %v; want context.Canceled", err)
	}
	if held, err := s.Lease(context.Background(), "k", "t", time.Second); err != nil || !held {
		t.Errorf("Lease after a cancelled call = %v, %v; want held (no cooldown)", held, err)
	}
	if st := s.Stats(); st.Errors != 0 {
		t.Errorf("Stats = %+v; want no error", st)
	}
}

// TestOneRoundTripPerRequest checks what a request costs the store once
// its origin's robots.txt is held: a paced request one call (its slot
// reservation, members counted in it), an unpaced one one call (the read
// of a pause another member may have stored), and neither touches the
// record, the lease or anything else.
func TestOneRoundTripPerRequest(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n")), Request: r}, nil
	})
	for _, tc := range []struct {
		name     string
		minDelay time.Duration
	}{
		{"paced", time.Second},
		{"unpaced", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeclock.New()
			tr := robots.NewTransport(base, robots.Options{UserAgent: "ExampleBot", MinDelay: tc.minDelay, Now: c.Now, Sleep: c.Sleep, Fleet: s})
			site := "http://" + tc.name + ".example"
			send := func(path string) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site+path, nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			send("/first") // fetches and stores the robots.txt
			for i := range 3 {
				before := s.Stats().Calls
				send("/page/" + strconv.Itoa(i))
				if n := s.Stats().Calls - before; n != 1 {
					t.Errorf("request %d made %d store calls, want 1", i, n)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestUnavailableClusterNamesCause checks that a Store on a Redis Cluster
// client names the cause of a failed dial too: a cluster dials through
// node clients, which the hooks added to the cluster client never reach.
func TestUnavailableClusterNamesCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: a dial is refused
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rc.Close()
	logs := &logBuffer{}
	s := redisstore.New(rc, redisstore.Options{Cooldown: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if _, found, err := s.Load(context.Background(), robots.RecordKey{Origin: origin}); found || !errors.Is(err, redisstore.ErrUnavailable) {
		t.Fatalf("Load with no cluster = %v, %v; want ErrUnavailable", found, err)
	}
	if got := strings.Join(logs.lines(), "\n"); !strings.Contains(got, "connection refused") {
		t.Errorf("log with the cluster unreachable = %q; want the cause, connection refused", got)
	}
}

// TestMalformedScriptRepliesAreUnavailable: a server whose script
// replies are not of the shape the scripts return (a proxy or a fork
// that mangles them) fails the call with ErrUnavailable, a store failure
// the transport falls back from, never a panic or a slot made up.
func TestMalformedScriptRepliesAreUnavailable(t *testing.T) {
	addr := serveRESP(t, func(cmd []string) string {
		switch strings.ToUpper(cmd[0]) {
		case "HELLO":
			return "-ERR unknown command 'HELLO'\r\n"
		case "EVALSHA", "EVAL":
			return "*1\r\n:1\r\n" // one element, where the scripts return more
		}
		return "+OK\r\n"
	})
	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rc.Close()
	s := redisstore.New(rc, redisstore.Options{Cooldown: -1})
	ctx := t.Context()
	if _, err := s.ReserveSlot(ctx, origin, robots.SlotRequest{Now: time.Now(), Interval: time.Second, Member: "m", Epoch: "e"}); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("ReserveSlot = %v; want ErrUnavailable", err)
	}
	if _, err := s.Reserve(ctx, "c USD", "http://site.example/a", 10, 100); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Reserve = %v; want ErrUnavailable", err)
	}
}

// serveRESP serves the Redis protocol on a loopback port until t ends,
// answering each command (its arguments as strings) with what reply
// returns, raw RESP.
func serveRESP(t *testing.T, reply func(cmd []string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					cmd, err := readCommand(r)
					if err != nil {
						return
					}
					if _, err := io.WriteString(conn, reply(cmd)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readHeader(r, '*')
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %v", err)
	}
	cmd := make([]string, n)
	for i := range cmd {
		size, err := readHeader(r, '$')
		if err != nil {
			return nil, err
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		cmd[i] = string(buf[:size])
	}
	return cmd, nil
}

// readHeader reads a RESP line of kind ('*' an array's length, '$' a
// bulk string's) and returns its count.
func readHeader(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, string(kind))))
	if err != nil || n < 0 || line[0] != kind {
		return 0, fmt.Errorf("not a %c line: %q", kind, line)
	}
	return n, nil
}
