package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/redisstore"
)

// silentRedis returns the address of a "Redis" that accepts connections
// and never answers, closed when t ends.
func silentRedis(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Read the command, never answer, hang up when the test ends.
			go func() { _, _ = c.Read(make([]byte, 1<<16)); <-t.Context().Done(); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// silentStore is a Store with opts on silentRedis, logging into logs.
func silentStore(t *testing.T, opts redisstore.Options, logs *logBuffer) *redisstore.Store {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: silentRedis(t), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return redisstore.New(client, opts)
}

// TestCallerDeadline: a call whose caller's deadline passes before Redis
// answers is the caller's, not a failure of Redis, even when the
// connection's read deadline, set from that context, fires before the
// context's own timer sets its Err: it is not counted in Errors, not
// logged, and starts no cooldown. A Redis that does not answer within
// Options.Timeout, the caller waiting, still is all three.
func TestCallerDeadline(t *testing.T) {
	calls := []struct {
		name string
		call func(context.Context, *redisstore.Store) error
	}{
		{"load", func(ctx context.Context, s *redisstore.Store) error {
			_, _, err := s.Load(ctx, robots.RecordKey{Origin: origin})
			return err
		}},
		{"reserve slot", func(ctx context.Context, s *redisstore.Store) error {
			_, err := s.ReserveSlot(ctx, origin, robots.SlotRequest{Member: "m", Now: time.Now(), Interval: time.Second})
			return err
		}},
	}
	t.Run("the caller's deadline is no failure", func(t *testing.T) {
		logs := &logBuffer{}
		// A store Timeout of a minute: a call waiting for it, not for its
		// caller, would pass any ceiling a paused machine might need.
		s := silentStore(t, redisstore.Options{Timeout: time.Minute, Cooldown: time.Hour}, logs)
		for i := range 20 {
			c := calls[i%len(calls)]
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			start := time.Now()
			err := c.call(ctx, s)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redisstore.ErrUnavailable) {
				t.Errorf("try %d, %s: err = %v; want the caller's DeadlineExceeded, not ErrUnavailable", i, c.name, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("try %d, %s took %v; want about the caller's 50ms, not the store's minute", i, c.name, d)
			}
		}
		if st := s.Stats(); st.Errors != 0 || st.Fallbacks != 0 {
			t.Errorf("Stats after 20 calls past their caller's deadline = %+v; want no error, no fallback", st)
		}
		if lines := logs.lines(); len(lines) != 0 {
			t.Errorf("log = %q; want nothing", lines)
		}
		// No cooldown: the next call tries Redis, and waits for it.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := calls[0].call(ctx, s); errors.Is(err, redisstore.ErrUnavailable) {
			t.Errorf("the next call: err = %v; want it to try Redis, not a cooldown", err)
		}
		if st := s.Stats(); st.Fallbacks != 0 {
			t.Errorf("Stats after the next call = %+v; want no fallback (no cooldown)", st)
		}
	})
	t.Run("a Redis silent past Timeout is a failure", func(t *testing.T) {
		logs := &logBuffer{}
		s := silentStore(t, redisstore.Options{Timeout: 100 * time.Millisecond, Cooldown: time.Hour}, logs)
		if err := calls[0].call(context.Background(), s); !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, robots.ErrStoreFailed) || errors.Is(err, robots.ErrStoreSkipped) {
			t.Errorf("load: err = %v; want ErrUnavailable, DeadlineExceeded and robots.ErrStoreFailed", err)
		}
		if st := s.Stats(); st.Errors != 1 || st.Fallbacks != 1 {
			t.Errorf("Stats after a call past Timeout = %+v; want 1 error, 1 fallback", st)
		}
		if got := strings.Join(logs.lines(), "\n"); !strings.Contains(got, "Redis unavailable") {
			t.Errorf("log = %q; want the failure", got)
		}
		// Refused by the cooldown, not by Redis: the error says so, and
		// Stats counts a fallback without a second error.
		if err := calls[1].call(context.Background(), s); !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, robots.ErrStoreSkipped) || !errors.Is(err, robots.ErrStoreFailed) || !strings.Contains(err.Error(), "after a failure") {
			t.Errorf("the next call: err = %v; want ErrUnavailable and robots.ErrStoreSkipped from the cooldown", err)
		}
		if st := s.Stats(); st.Errors != 1 || st.Fallbacks != 2 {
			t.Errorf("Stats after the next call = %+v; want 1 error, 2 fallbacks", st)
		}
	})
}

// reloadCounter is a client with a ReloadState method, as a Cluster
// client has, that counts the reloads asked.
type reloadCounter struct {
	*redis.Client
	reloads atomic.Int32
}

func (c *reloadCounter) ReloadState(context.Context) { c.reloads.Add(1) }

// TestFailedCallsReloadTheSlotMapOnceACooldown: a failed call asks a
// client that can reload where the data lives (a Cluster's slot map) to
// do so, since the failure may be a node that is gone; calls failing on
// and on ask it at most once a Cooldown, a second without one.
func TestFailedCallsReloadTheSlotMapOnceACooldown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cooldown time.Duration
	}{
		{"a Cooldown", time.Minute},
		{"none", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close() // every dial is refused
			client := &reloadCounter{Client: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})}
			t.Cleanup(func() { client.Close() })
			store := redisstore.New(client, redisstore.Options{Cooldown: tc.cooldown, Timeout: 10 * time.Millisecond})
			start := time.Now()
			for range 20 {
				store.Load(context.Background(), robots.RecordKey{Origin: "https://site.example"})
			}
			// A slow machine spreads the calls over more seconds, each
			// of which may ask once.
			took := time.Since(start)
			if n := client.reloads.Load(); n < 1 || int(n) > 1+int(took/time.Second) {
				t.Errorf("20 failed calls in %v asked for %d reloads, want 1 and at most one a second", took, n)
			}
		})
	}
}
