package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// failingFleet is a Fleet whose every call fails, with err or else
// errFleetDown, counting the calls.
type failingFleet struct {
	calls  atomic.Int64
	err    error
	panics bool // with the error, rather than return it
}

var errFleetDown = errors.New("fleet down")

func (f *failingFleet) fail() error {
	f.calls.Add(1)
	err := f.err
	if err == nil {
		err = errFleetDown
	}
	if f.panics {
		panic(err)
	}
	return err
}

func (f *failingFleet) Load(context.Context, RecordKey) ([]byte, bool, error) {
	return nil, false, f.fail()
}
func (f *failingFleet) Swap(context.Context, RecordKey, []byte, []byte) (bool, error) {
	return false, f.fail()
}
func (f *failingFleet) Lease(context.Context, OriginKey, string, time.Duration) (bool, error) {
	return false, f.fail()
}
func (f *failingFleet) Unlease(context.Context, OriginKey, string) error { return f.fail() }
func (f *failingFleet) ReserveSlot(context.Context, OriginKey, SlotRequest) (Slot, error) {
	return Slot{}, f.fail()
}
func (f *failingFleet) CancelSlot(context.Context, OriginKey, time.Time, time.Duration) error {
	return f.fail()
}
func (f *failingFleet) Pause(context.Context, OriginKey, time.Time) error { return f.fail() }
func (f *failingFleet) NextSlot(context.Context, OriginKey, SlotRequest) (time.Time, error) {
	return time.Time{}, f.fail()
}
func (f *failingFleet) Reserve(context.Context, string, string, int64, int64) (Reservation, error) {
	return Reservation{}, f.fail()
}
func (f *failingFleet) Settle(context.Context, string, string, int64, int64) error { return f.fail() }
func (f *failingFleet) Release(context.Context, string, string, int64) error       { return f.fail() }

// expiredContext is a context whose deadline has passed while its Err is
// still nil, as a connection's read deadline set from it can fire before
// the context's own timer does.
type expiredContext struct{ context.Context }

func (expiredContext) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestCountedFleetCountsEveryCallsError checks that the Fleet the
// transport calls counts one fallback for each failed call of every one
// of its methods (Stats.StoreFallbacks) and one error unless the store
// skipped it (Stats.StoreErrors), and neither for a call whose context
// had ended: cancelled, or past its deadline before its timer set Err.
// A call that panics fails with the panic as its error, logged, and is
// counted as the store's failure.
func TestCountedFleetCountsEveryCallsError(t *testing.T) {
	calls := []struct {
		name string
		call func(ctx context.Context, f Fleet) error
	}{
		{"Load", func(ctx context.Context, f Fleet) error { _, _, err := f.Load(ctx, RecordKey{Origin: "o"}); return err }},
		{"Swap", func(ctx context.Context, f Fleet) error {
			_, err := f.Swap(ctx, RecordKey{Origin: "o"}, nil, []byte("v"))
			return err
		}},
		{"Lease", func(ctx context.Context, f Fleet) error { _, err := f.Lease(ctx, "o", "tok", time.Second); return err }},
		{"Unlease", func(ctx context.Context, f Fleet) error { return f.Unlease(ctx, "o", "tok") }},
		{"ReserveSlot", func(ctx context.Context, f Fleet) error { _, err := f.ReserveSlot(ctx, "o", SlotRequest{}); return err }},
		{"CancelSlot", func(ctx context.Context, f Fleet) error { return f.CancelSlot(ctx, "o", time.Time{}, time.Second) }},
		{"Pause", func(ctx context.Context, f Fleet) error { return f.Pause(ctx, "o", time.Time{}) }},
		{"NextSlot", func(ctx context.Context, f Fleet) error { _, err := f.NextSlot(ctx, "o", SlotRequest{}); return err }},
		{"Reserve", func(ctx context.Context, f Fleet) error { _, err := f.Reserve(ctx, "c USD", "u", 1, 2); return err }},
		{"Settle", func(ctx context.Context, f Fleet) error { return f.Settle(ctx, "c USD", "u", 1, 1) }},
		{"Release", func(ctx context.Context, f Fleet) error { return f.Release(ctx, "c USD", "u", 1) }},
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	skipped := fmt.Errorf("resting: %w: %w", errFleetDown, ErrStoreSkipped)
	for _, c := range calls {
		for _, failure := range []struct {
			name   string
			err    error
			error  int64 // counted as an error by a live call
			panics bool
		}{{"failed", errFleetDown, 1, false}, {"skipped", skipped, 0, false}, {"panicked", errFleetDown, 1, true}} {
			t.Run(c.name+"/"+failure.name, func(t *testing.T) {
				inner := &failingFleet{err: failure.err, panics: failure.panics}
				var stats counters
				var logged strings.Builder
				f := counted(inner, &stats, slog.New(slog.NewTextHandler(&logged, nil)))
				for _, ctx := range []struct {
					name   string
					ctx    context.Context
					counts int64
				}{
					{"a live context", context.Background(), 1},
					{"a cancelled context", cancelled, 0},
					{"a context past its deadline, Err not yet set", expiredContext{context.Background()}, 0},
				} {
					errs, fallbacks, calls := stats.storeErrors.Load(), stats.storeFallbacks.Load(), inner.calls.Load()
					if err := c.call(ctx.ctx, f); !errors.Is(err, errFleetDown) {
						t.Errorf("with %s: err = %v, want the store's own", ctx.name, err)
					}
					if inner.calls.Load() != calls+1 {
						t.Errorf("with %s: the store was called %d times, want once", ctx.name, inner.calls.Load()-calls)
					}
					if n := stats.storeFallbacks.Load() - fallbacks; n != ctx.counts {
						t.Errorf("with %s: %d fallbacks counted, want %d", ctx.name, n, ctx.counts)
					}
					if n := stats.storeErrors.Load() - errs; n != ctx.counts*failure.error {
						t.Errorf("with %s: %d errors counted, want %d", ctx.name, n, ctx.counts*failure.error)
					}
				}
				if want := "panic in Fleet." + c.name; failure.panics != strings.Contains(logged.String(), want) {
					t.Errorf("logged %q; want %q logged only for a panic", logged.String(), want)
				}
			})
		}
	}
	if counted(nil, new(counters), slog.New(slog.DiscardHandler)) != nil {
		t.Error("counted(nil) is a Fleet; want none, so that a transport without one has none")
	}
}

// pastDeadline is a context whose deadline has passed while its timer
// has not yet set Err, as a connection's read deadline can see it.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestCallerGaveUp checks each way a caller gives up, and that a caller
// still waiting, with a deadline or without, has not, nor has a store
// call past the bound the transport set itself, detached from any caller.
func TestCallerGaveUp(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	waiting, cancelWaiting := context.WithTimeout(context.Background(), time.Hour)
	defer cancelWaiting()
	ownExpired, cancelOwn := boundFor(context.Background(), -time.Second)
	defer cancelOwn()
	ownCancelled, cancelOwnLater := boundFor(cancelled, time.Hour)
	defer cancelOwnLater()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"no deadline", context.Background(), nil},
		{"a deadline to come", waiting, nil},
		{"cancelled", cancelled, context.Canceled},
		{"past its deadline", expired, context.DeadlineExceeded},
		{"past its deadline, its timer not yet run", pastDeadline{context.Background()}, context.DeadlineExceeded},
		{"past the transport's own bound", ownExpired, nil},
		{"past the transport's own bound, its timer not yet run", pastDeadline{context.WithValue(context.Background(), ownBound{}, true)}, nil},
		{"cancelled within the transport's own bound", ownCancelled, context.Canceled},
	} {
		if got := CallerGaveUp(tc.ctx); !errors.Is(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%s: CallerGaveUp = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// loadFails is a MemoryFleet whose Load fails with err.
type loadFails struct {
	*MemoryFleet
	err error
}

func (f loadFails) Load(context.Context, RecordKey) ([]byte, bool, error) { return nil, false, f.err }

// TestStoreCountsAgree: the transport counts a store call as the store
// does. A failure or a skipped call the store marked (StoreFailed) it
// counted while the caller waited, so the transport counts it even when
// the caller's deadline passed before the call returned; any other error
// of a caller that gave up is the caller's.
func TestStoreCountsAgree(t *testing.T) {
	for _, tc := range []struct {
		name              string
		err               error
		ended             bool
		errors, fallbacks int64
	}{
		{"a failure while the caller waits", errors.New("connection refused"), false, 1, 1},
		{"a failure the store counted, the caller's deadline passed since", StoreFailed(errors.New("timeout")), true, 1, 1},
		{"a call the store skipped, the caller's deadline passed since", fmt.Errorf("resting: %w", StoreFailed(ErrStoreSkipped)), true, 0, 1},
		{"a call skipped unmarked once the caller gave up", fmt.Errorf("resting: %w", ErrStoreSkipped), true, 0, 0},
		{"the caller gave up", context.DeadlineExceeded, true, 0, 0},
		{"an unmarked failure once the caller gave up", errors.New("i/o timeout"), true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stats counters
			f := counted(loadFails{NewMemoryFleet(), tc.err}, &stats, slog.New(slog.DiscardHandler))
			ctx := context.Background()
			if tc.ended {
				ctx = pastDeadline{ctx}
			}
			if _, _, err := f.Load(ctx, RecordKey{}); !errors.Is(err, tc.err) || err.Error() != tc.err.Error() {
				t.Errorf("Load = %v, want the store's %v", err, tc.err)
			}
			if e, fb := stats.storeErrors.Load(), stats.storeFallbacks.Load(); e != tc.errors || fb != tc.fallbacks {
				t.Errorf("StoreErrors %d, StoreFallbacks %d; want %d, %d", e, fb, tc.errors, tc.fallbacks)
			}
		})
	}
}

// hangingLoads is a MemoryFleet whose Load, while hang is set, returns
// only when its context ends.
type hangingLoads struct {
	*MemoryFleet
	hang atomic.Bool
}

func (f *hangingLoads) Load(ctx context.Context, key RecordKey) ([]byte, bool, error) {
	if f.hang.Load() {
		<-ctx.Done()
		return nil, false, ctx.Err()
	}
	return f.MemoryFleet.Load(ctx, key)
}

// TestRenewalOutlivesAStoreThatNeverAnswers checks that an origin's
// robots.txt renewal, which runs detached from the request that started
// it, ends when the store never answers its read: the request returns at
// its deadline, and once the store call's bound passed the origin's
// requests are decided again; the read no caller waited for any more
// counts as the store's failure, not a caller giving up.
func TestRenewalOutlivesAStoreThatNeverAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := &hangingLoads{MemoryFleet: NewMemoryFleet()}
		fleet.hang.Store(true)
		site := newFakeSite(nil)
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
		send := func(path string) error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := send("/first"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a request while the store never answers = %v, want its deadline's error", err)
		}
		fleet.hang.Store(false)
		time.Sleep(DefaultFetchTimeout)
		if n := tr.Stats().StoreErrors; n != 1 {
			t.Errorf("StoreErrors = %d after a read the store never answered, want 1", n)
		}
		if err := send("/after"); err != nil {
			t.Fatalf("a request after the store call's bound = %v, want it sent: the renewal never ended", err)
		}
		if n := len(site.pageHits()); n != 1 {
			t.Errorf("%d pages sent, want 1", n)
		}
	})
}

// TestFleetThatPanicsIsAStoreThatFails checks that a Fleet whose every
// method panics is a store that cannot answer, whoever calls it: the
// request waiting for it (a slot, a record, NextFree) or a goroutine of
// the transport's own (the pause of a 429, told in the background). The
// process goes on pacing alone and counts each call a failure.
func TestFleetThatPanicsIsAStoreThatFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		var pages atomic.Int32
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			if pages.Add(1) == 1 {
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		tr := newBubbleTransport(site, Options{MinDelay: time.Second, Fleet: &failingFleet{panics: true}})
		start := time.Now()
		for i := range 3 {
			if _, err := bubbleGet(t, tr, fmt.Sprintf("https://site.example/%d", i)); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		if _, err := tr.NextFree(t.Context(), "https://site.example/next"); err != nil {
			t.Errorf("NextFree: %v", err)
		}
		synctest.Wait()
		if got := hitTimes(site.pageHits(), start); len(got) != 3 || got[1] < 5*time.Second || got[2]-got[1] < time.Second {
			t.Errorf("pages sent at %v; want the second after the 5s pause, the third a second later", got)
		}
		if n := tr.Stats().StoreErrors; n == 0 {
			t.Error("StoreErrors = 0; want every panicking call counted")
		}
	})
}
