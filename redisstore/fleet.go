package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
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

	// reserveScript: KEYS[1] slot (a hash: last reserved slot, pause),
	// KEYS[2] members (a sorted set: each member until when it counts);
	// ARGV: now, the earliest slot, interval, limit (0: none), the member
	// window, all in µs, the margin in ms, and the member. It returns
	// {reserved (1 or 0), slot, members}. The slot key expires the margin
	// after the later of the next slot and the pause, the members key the
	// margin after its last member's window, both counted from now.
	reserveScript = redis.NewScript(`
local now, at, interval, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local window, margin = tonumber(ARGV[5]), tonumber(ARGV[6])
local st = redis.call('HMGET', KEYS[1], 'last', 'pause')
local last, pause = tonumber(st[1]), tonumber(st[2])
if last and last + interval > at then at = last + interval end
if pause and pause > at then at = pause end
local reserved = 1
if limit > 0 and at > limit then reserved = 0 end
local seen = now + window
if reserved == 1 then seen = at + window end
local cur = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[7]))
if not cur or cur < seen then redis.call('ZADD', KEYS[2], string.format('%d', seen), ARGV[7]) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('(%d', now))
local members = redis.call('ZCARD', KEYS[2])
local keepMembers = math.floor((seen - now) / 1000) + margin
if redis.call('PTTL', KEYS[2]) < keepMembers then redis.call('PEXPIRE', KEYS[2], keepMembers) end
if reserved == 0 then return {0, at, members} end
redis.call('HSET', KEYS[1], 'last', string.format('%d', at))
local keep = at + interval
if pause and pause > keep then keep = pause end
redis.call('PEXPIRE', KEYS[1], math.floor((keep - now) / 1000) + margin)
return {1, at, members}
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

// Lease takes the fleet's lease on fetching origin's robots.txt for ttl,
// if no one holds it, and reports whether token now holds it. A holder
// that dies loses the lease when ttl runs out.
func (s *Store) Lease(ctx context.Context, origin robots.OriginKey, token string, ttl time.Duration) (bool, error) {
	return call(ctx, s, "lease", func(ctx context.Context) (bool, error) {
		return s.client.SetNX(ctx, s.key(origin, "lease"), token, max(ttl, time.Millisecond)).Result()
	})
}

// Unlease gives up the lease on origin if token still holds it.
func (s *Store) Unlease(ctx context.Context, origin robots.OriginKey, token string) error {
	_, err := call(ctx, s, "unlease", func(ctx context.Context) (any, error) {
		return unleaseScript.Run(ctx, s.client, []string{s.key(origin, "lease")}, token).Result()
	})
	return err
}

// Swap stores new under key, for Options.TTL, only if the stored value
// equals old (old nil: only if key is absent), and reports whether it
// stored. Concurrent writers that load, merge and swap never overwrite each
// other's record.
func (s *Store) Swap(ctx context.Context, key robots.RecordKey, old, new []byte) (bool, error) {
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
// earlier than req.NotBefore (or req.Now), than the last slot reserved by
// any process plus req.Interval, or than a pause, in one round trip. If
// that time is after req.Limit (a zero Limit: no limit), nothing is
// reserved, and the Slot says when it would have been.
//
// The same call is the member's heartbeat: the Slot counts the members
// that reserved a slot of origin whose time, or whose refused request,
// lies within MemberWindow (or 32 intervals, if longer) of req.Now, the
// caller included. A member that stops or dies drops out of the count
// once that window has passed, with nothing to run in the background.
//
// Slots are times on the clocks of the processes that reserve them, so the
// spacing between two processes' requests is kept to within the skew of
// their clocks: a process whose clock runs ahead by s may send up to s
// sooner than interval after another's request, and one whose clock lags
// waits up to s longer.
func (s *Store) ReserveSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (robots.Slot, error) {
	var lim int64
	if !req.Limit.IsZero() {
		lim = max(req.Limit.UnixMicro(), 1)
	}
	from := req.Now
	if req.NotBefore.After(from) {
		from = req.NotBefore
	}
	interval := max(req.Interval, 0)
	window := max(MemberWindow, 32*interval)
	reply, err := call(ctx, s, "reserve slot", func(ctx context.Context) ([]int64, error) {
		r, err := reserveScript.Run(ctx, s.client, []string{s.key(origin, "slot"), s.key(origin, "members")},
			req.Now.UnixMicro(), from.UnixMicro(), interval.Microseconds(), lim,
			window.Microseconds(), slotMargin.Milliseconds(), req.Member).Int64Slice()
		if err == nil && len(r) != 3 {
			err = fmt.Errorf("reply %v is not {reserved, slot, members}", r)
		}
		return r, err
	})
	if err != nil {
		return robots.Slot{}, err
	}
	return robots.Slot{At: time.UnixMicro(reply[1]).In(req.Now.Location()), Reserved: reply[0] == 1, Members: int(reply[2])}, nil
}

// MemberWindow is the least time a member counts as pacing an origin
// after its last slot there: see ReserveSlot.
const MemberWindow = time.Minute

// CancelSlot gives back the slot at, reserved with interval, if no later
// slot was reserved since.
func (s *Store) CancelSlot(ctx context.Context, origin robots.OriginKey, at time.Time, interval time.Duration) error {
	_, err := call(ctx, s, "cancel slot", func(ctx context.Context) (any, error) {
		return cancelScript.Run(ctx, s.client, []string{s.key(origin, "slot")},
			at.UnixMicro(), max(interval, 0).Microseconds()).Result()
	})
	return err
}

// Pause holds every slot of origin reserved from now on until at least
// until, for every process: a Retry-After received by one process paces the
// whole fleet.
func (s *Store) Pause(ctx context.Context, origin robots.OriginKey, until time.Time) error {
	// The seam gives no "now", so the key's expiry is counted on the real
	// clock, bounded by TTL against a clock far off; a minute more covers
	// the skew between processes.
	keep := min(max(time.Until(until), 0), s.ttl) + slotMargin
	_, err := call(ctx, s, "pause", func(ctx context.Context) (any, error) {
		return pauseScript.Run(ctx, s.client, []string{s.key(origin, "slot")},
			until.UnixMicro(), keep.Milliseconds()).Result()
	})
	return err
}

// PausedUntil returns the end of the pause any process stored for origin
// (see Pause), in one round trip; the zero time when there is none.
func (s *Store) PausedUntil(ctx context.Context, origin robots.OriginKey) (time.Time, error) {
	until, err := call(ctx, s, "paused", func(ctx context.Context) (int64, error) {
		v, err := s.client.HGet(ctx, s.key(origin, "slot"), "pause").Int64()
		if err == redis.Nil {
			return 0, nil
		}
		return v, err
	})
	if err != nil || until == 0 {
		return time.Time{}, err
	}
	return time.UnixMicro(until), nil
}

// slotMargin is how long a slot key outlives its last slot or pause.
const slotMargin = time.Minute
