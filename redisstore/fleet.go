package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts run atomically on the server, each on the keys of one origin
// (one hash tag). Times cross as Unix microseconds, which a Lua number (a
// double) holds exactly; durations as microseconds or, for expiries,
// milliseconds. Numbers are written back with string.format('%d'), since
// Redis would print a Lua number with 14 significant digits only.
var (
	// swapScript: KEYS[1] record; ARGV: "1" if an old value is expected
	// ("0": the key must be absent), the old value, the new value, the
	// expiry in ms.
	swapScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if cur then return 0 end
elseif cur ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1
`)

	// unleaseScript: KEYS[1] lease; ARGV[1] the holder's token.
	unleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

	// reserveScript: KEYS[1] slot (a hash: last reserved slot, pause);
	// ARGV: now, interval, limit (0: none), all in µs, and the margin in
	// ms. It returns {reserved (1 or 0), slot}. The key expires the
	// margin after the later of the next slot and the pause, counted
	// from now.
	reserveScript = redis.NewScript(`
local now, interval, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local st = redis.call('HMGET', KEYS[1], 'last', 'pause')
local last, pause = tonumber(st[1]), tonumber(st[2])
local at = now
if last and last + interval > at then at = last + interval end
if pause and pause > at then at = pause end
if limit > 0 and at > limit then return {0, at} end
redis.call('HSET', KEYS[1], 'last', string.format('%d', at))
local keep = at + interval
if pause and pause > keep then keep = pause end
redis.call('PEXPIRE', KEYS[1], math.floor((keep - now) / 1000) + tonumber(ARGV[4]))
return {1, at}
`)

	// cancelScript: KEYS[1] slot; ARGV: the slot given back and its
	// interval, in µs. The slot is given back only while it is the last
	// one, by moving the last slot one interval before it, so the next
	// reservation can take it again.
	cancelScript = redis.NewScript(`
if tonumber(redis.call('HGET', KEYS[1], 'last')) == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'last', string.format('%d', tonumber(ARGV[1]) - tonumber(ARGV[2])))
end
return 0
`)

	// pauseScript: KEYS[1] slot; ARGV: the pause's end in µs, and how
	// long the key must at least be kept, in ms. A pause only ever grows.
	pauseScript = redis.NewScript(`
local untilAt, keep = tonumber(ARGV[1]), tonumber(ARGV[2])
local cur = tonumber(redis.call('HGET', KEYS[1], 'pause'))
if cur and cur >= untilAt then return 0 end
redis.call('HSET', KEYS[1], 'pause', ARGV[1])
if redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], keep) end
return 1
`)
)

// Lease takes the fleet's lease on fetching the robots.txt stored under key
// (a record key) for ttl, if no one holds it, and reports whether token now
// holds it. A holder that dies loses the lease when ttl runs out.
func (s *Store) Lease(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	return call(ctx, s, "lease", func(ctx context.Context) (bool, error) {
		return s.client.SetNX(ctx, s.leaseKey(key), token, max(ttl, time.Millisecond)).Result()
	})
}

// Unlease gives up the lease on key if token still holds it.
func (s *Store) Unlease(ctx context.Context, key, token string) error {
	_, err := call(ctx, s, "unlease", func(ctx context.Context) (any, error) {
		return unleaseScript.Run(ctx, s.client, []string{s.leaseKey(key)}, token).Result()
	})
	return err
}

// Swap stores new under key, for Options.TTL, only if the stored value
// equals old (old nil: only if key is absent), and reports whether it
// stored. Concurrent writers that load, merge and swap never overwrite each
// other's record.
func (s *Store) Swap(ctx context.Context, key string, old, new []byte) (bool, error) {
	expect := "1"
	if old == nil {
		expect = "0"
	}
	return call(ctx, s, "swap", func(ctx context.Context) (bool, error) {
		n, err := swapScript.Run(ctx, s.client, []string{s.recordKey(key)},
			expect, old, new, s.ttl.Milliseconds()).Int()
		return n == 1, err
	})
}

// ReserveSlot reserves the earliest send time for origin that is no
// earlier than now, than the last slot reserved by any process plus
// interval, or than a pause, in one round trip. If that time is after limit
// (a zero limit: no limit), nothing is reserved, ok is false, and at says
// when the slot would have been.
//
// Slots are times on the clocks of the processes that reserve them, so the
// spacing between two processes' requests is kept to within the skew of
// their clocks: a process whose clock runs ahead by s may send up to s
// sooner than interval after another's request, and one whose clock lags
// waits up to s longer.
func (s *Store) ReserveSlot(ctx context.Context, origin string, now time.Time, interval time.Duration, limit time.Time) (at time.Time, ok bool, err error) {
	var lim int64
	if !limit.IsZero() {
		lim = max(limit.UnixMicro(), 1)
	}
	reply, err := call(ctx, s, "reserve slot", func(ctx context.Context) ([]int64, error) {
		r, err := reserveScript.Run(ctx, s.client, []string{s.slotKey(origin)},
			now.UnixMicro(), max(interval, 0).Microseconds(), lim, slotMargin.Milliseconds()).Int64Slice()
		if err == nil && len(r) != 2 {
			err = fmt.Errorf("reply %v is not {reserved, slot}", r)
		}
		return r, err
	})
	if err != nil {
		return time.Time{}, false, err
	}
	return time.UnixMicro(reply[1]).In(now.Location()), reply[0] == 1, nil
}

// CancelSlot gives back the slot at, reserved with interval, if no later
// slot was reserved since.
func (s *Store) CancelSlot(ctx context.Context, origin string, at time.Time, interval time.Duration) error {
	_, err := call(ctx, s, "cancel slot", func(ctx context.Context) (any, error) {
		return cancelScript.Run(ctx, s.client, []string{s.slotKey(origin)},
			at.UnixMicro(), max(interval, 0).Microseconds()).Result()
	})
	return err
}

// Pause holds every slot of origin reserved from now on until at least
// until, for every process: a Retry-After received by one process paces the
// whole fleet.
func (s *Store) Pause(ctx context.Context, origin string, until time.Time) error {
	// The seam gives no "now", so the key's expiry is counted on the real
	// clock, bounded by TTL against a clock far off; a minute more covers
	// the skew between processes.
	keep := min(max(time.Until(until), 0), s.ttl) + slotMargin
	_, err := call(ctx, s, "pause", func(ctx context.Context) (any, error) {
		return pauseScript.Run(ctx, s.client, []string{s.slotKey(origin)},
			until.UnixMicro(), keep.Milliseconds()).Result()
	})
	return err
}

// slotMargin is how long a slot key outlives its last slot or pause.
const slotMargin = time.Minute
