package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/micros"
)

// The scripts run atomically on the server, each on the keys of one origin
// (one hash tag). Times cross as Unix microseconds, which a Lua number (a
// double) holds exactly until the year 2255; durations as microseconds
// or, for expiries, milliseconds. Numbers are written back packed by
// struct.pack, since Redis would print a Lua number with 14 significant
// digits only.
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

	// leaseScript: KEYS[1] lease; ARGV: the token taking it, its expiry
	// in ms. The lease is taken when free or held by the same token
	// (whose expiry then starts again), as robots.Fleet's Lease says.
	leaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

	// unleaseScript: KEYS[1] lease; ARGV[1] the holder's token.
	unleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

	// slotScript reserves a slot, or, asked to peek, says which it would
	// reserve, so that the slot arithmetic is written once. KEYS[1] slot,
	// one string that the scripts read and write whole: a byte of flags
	// (1: a last slot is kept, 2: a pause), then as big-endian 64-bit
	// integers the last slot (plus its spread), the pause's end and the
	// latest time any call asked the key to be kept, in µs; then the
	// epoch (a 32-bit length and its bytes; none: the store has no
	// epoch) and, for each member counted, its name (likewise) and until
	// when it counts (64-bit, µs). ARGV[1] holds eight big-endian 64-bit
	// integers (one argument read by struct.unpack costs the server a
	// fraction of eight read by tonumber): now, the earliest slot,
	// interval, limit (0: none), the member window, all in µs, the margin
	// in ms, the member's latest slot sent (0: none) and the spread, in
	// µs: a reserved slot lasts until it plus the spread, which is what
	// the next slot follows. ARGV[2] is the member, ARGV[3] the epoch to
	// take if the state has none, ARGV[4] "1" to peek ("0": reserve). A
	// state without an epoch is a store that lost the origin's pace (or
	// never had it): it takes the caller's, and every member that held
	// another reserves its slots anew. The slot of a member that sent one
	// is never lost: last is raised to it first, whether a slot is then
	// reserved or not. It returns {reserved (1 or 0), slot, members,
	// epoch}.
	//
	// One read and one write that sets the expiry too, whatever the
	// members: the key expires the margin after the latest of the next
	// slot, the pause and the members' windows that any call asked for,
	// counted from now, and members whose window passed are dropped as
	// they are met. A peek writes nothing and counts no member (members
	// is 0), and with a zero interval it is the later of the earliest
	// slot and the pause, as robots.Pace's NextSlot says.
	slotScript = redis.NewScript(`
local now, at, interval, limit, window, margin, held, spread = struct.unpack('>i8i8i8i8i8i8i8i8', ARGV[1])
local mine, peek = ARGV[2], ARGV[4] == '1'
local s = redis.call('GET', KEYS[1])
local last, pause, keep, epoch, cur
local members, kept = 1, {}
if s then
  local flags, l, p, k, n, pos = struct.unpack('>Bi8i8i8i4', s)
  if flags % 2 == 1 then last = l end
  if flags >= 2 then pause = p end
  keep = k
  if n > 0 then epoch = string.sub(s, pos, pos + n - 1) end
  pos = pos + n
  while pos <= #s do
    local from, m, till = pos
    n, pos = struct.unpack('>i4', s, pos)
    m = string.sub(s, pos, pos + n - 1)
    till, pos = struct.unpack('>i8', s, pos + n)
    if m == mine then cur = till
    elseif till >= now then
      members = members + 1
      kept[#kept + 1] = string.sub(s, from, pos - 1)
    end
  end
end
epoch = epoch or ARGV[3]
if held > 0 and (not last or last < held) then last = held end
if last and (interval > 0 or not peek) and last + interval > at then at = last + interval end
if pause and pause > at then at = pause end
if peek then return {0, at, 0, epoch} end
local reserved = 1
if limit > 0 and at > limit then reserved = 0 end
local seen = now + window
if reserved == 1 then seen = at + window end
if cur and cur > seen then seen = cur end
local upto = math.max(seen, now)
if last then upto = math.max(upto, last + interval) end
if reserved == 1 then
  last = at + spread
  upto = math.max(upto, last + interval)
end
if pause then upto = math.max(upto, pause) end
if keep and keep > upto then upto = keep end
local flags = 0
if last then flags = 1 end
if pause then flags = flags + 2 end
redis.call('SET', KEYS[1], struct.pack('>Bi8i8i8i4', flags, last or 0, pause or 0, upto, #epoch) .. epoch ..
  table.concat(kept) .. struct.pack('>i4', #mine) .. mine .. struct.pack('>i8', seen),
  'PX', math.floor((upto - now) / 1000) + margin)
return {reserved, at, members, epoch}
`)

	// cancelScript: KEYS[1] slot; ARGV: the slot given back and its
	// interval, in µs. The slot is given back only while it is the last
	// one, by moving the last slot one interval before it, so the next
	// reservation can take it again.
	cancelScript = redis.NewScript(`
local s = redis.call('GET', KEYS[1])
if not s then return 0 end
local flags, last = struct.unpack('>Bi8', s)
if flags % 2 == 1 and last == tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], string.sub(s, 1, 1) .. struct.pack('>i8', last - tonumber(ARGV[2])) .. string.sub(s, 10), 'KEEPTTL')
end
return 0
`)

	// pauseScript: KEYS[1] slot; ARGV: the pause's end in µs, and how
	// long the key must at least be kept, in ms. A pause only ever grows.
	pauseScript = redis.NewScript(`
local untilAt, keep = tonumber(ARGV[1]), tonumber(ARGV[2])
local s = redis.call('GET', KEYS[1])
if not s then
  redis.call('SET', KEYS[1], struct.pack('>Bi8i8i8i4', 2, 0, untilAt, 0, 0), 'PX', keep)
  return 1
end
local flags, last, pause = struct.unpack('>Bi8i8', s)
if flags >= 2 and pause >= untilAt then return 0 end
if flags < 2 then flags = flags + 2 end
redis.call('SET', KEYS[1], struct.pack('>B', flags) .. string.sub(s, 2, 9) .. struct.pack('>i8', untilAt) .. string.sub(s, 18),
  'PX', math.max(redis.call('PTTL', KEYS[1]), keep))
return 1
`)
)

// Lease takes the fleet's lease on fetching origin's robots.txt for ttl,
// if no one else holds it, and reports whether token now holds it, in
// one round trip; token taking it again holds it for ttl from then. A
// holder that dies loses the lease when ttl runs out.
func (s *Store) Lease(ctx context.Context, origin robots.OriginKey, token string, ttl time.Duration) (bool, error) {
	return call(ctx, s, "lease", func(ctx context.Context) (bool, error) {
		n, err := leaseScript.Run(ctx, s.client, []string{s.key(origin, "lease")},
			token, max(ttl, time.Millisecond).Milliseconds()).Int()
		return n == 1, err
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
// earlier than req.NotBefore (or req.Now), than req.Held plus
// req.Interval, than the last slot reserved by any process plus
// req.Interval, or than a pause, in one round trip. The origin's last
// slot is raised to req.Held first. If that time is after req.Limit (a
// zero Limit: no limit; Limit equal to Now: only a slot free now),
// nothing is reserved, and the Slot says when it would have been.
//
// The same call is the member's heartbeat: the Slot counts the members
// that reserved a slot of origin whose time, or whose refused request,
// lies within robots.MemberWindowFor(req.Interval) of req.Now (a minute,
// or 32 intervals if longer), the caller included. A member that stops or
// dies drops out of the count once that window has passed, with nothing
// to run in the background.
//
// Slot.Epoch is the origin's epoch: Redis keeps it beside the origin's
// last slot, and a Redis that lost them (restarted without persistence,
// flushed, failed over to a replica behind) takes req.Epoch as the new
// one, which tells the members that the slots they hold are unknown to
// it.
//
// Slots are times on the clocks of the processes that reserve them, so the
// spacing between two processes' requests is kept to within the skew of
// their clocks: a process whose clock runs ahead by s may send up to s
// sooner than interval after another's request, and one whose clock lags
// waits up to s longer.
func (s *Store) ReserveSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (robots.Slot, error) {
	return s.slot(ctx, "reserve slot", origin, req, false)
}

// NextSlot returns the slot ReserveSlot would reserve for req, a pause
// included, in one round trip, without reserving it or counting a member:
// when origin is next free for the fleet. With a zero req.Interval it is
// the later of req.Now and the end of the pause any member stored.
func (s *Store) NextSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (time.Time, error) {
	slot, err := s.slot(ctx, "next slot", origin, req, true)
	return slot.At, err
}

// slot runs slotScript for req, the call op: it reserves, or with peek
// only says what it would reserve.
func (s *Store) slot(ctx context.Context, op string, origin robots.OriginKey, req robots.SlotRequest, peek bool) (robots.Slot, error) {
	var lim, held int64
	if !req.Limit.IsZero() {
		lim = max(req.Limit.UnixMicro(), 1)
	}
	if !req.Held.IsZero() {
		held = max(micros.Up(req.Held), 0)
	}
	from := req.Now
	if req.NotBefore.After(from) {
		from = req.NotBefore
	}
	interval := max(req.Interval, 0)
	window := robots.MemberWindowFor(interval)
	epoch := req.Epoch
	if epoch == "" {
		epoch = "-"
	}
	mode := "0"
	if peek {
		mode = "1"
	}
	reply, err := call(ctx, s, op, func(ctx context.Context) ([]any, error) {
		var nums [64]byte
		for i, v := range [...]int64{micros.Up(req.Now), micros.Up(from), micros.UpDuration(interval), lim,
			micros.UpDuration(window), slotMargin.Milliseconds(), held, micros.UpDuration(req.Spread)} {
			binary.BigEndian.PutUint64(nums[8*i:], uint64(v))
		}
		r, err := slotScript.Run(ctx, s.client, []string{s.key(origin, "slot")},
			nums[:], req.Member, epoch, mode).Slice()
		if err == nil && len(r) != 4 {
			err = fmt.Errorf("reply %v is not {reserved, slot, members, epoch}", r)
		}
		return r, err
	})
	if err != nil {
		return robots.Slot{}, err
	}
	reserved, ok1 := reply[0].(int64)
	at, ok2 := reply[1].(int64)
	members, ok3 := reply[2].(int64)
	ep, ok4 := reply[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return robots.Slot{}, fmt.Errorf("%w: %s: reply %v is not {reserved, slot, members, epoch}", ErrUnavailable, op, reply)
	}
	return robots.Slot{At: time.UnixMicro(at).In(req.Now.Location()), Reserved: reserved == 1, Members: int(members), Epoch: ep}, nil
}

// MemberWindow is the least time a member counts as pacing an origin
// after its last slot there, widened for long intervals: see ReserveSlot
// and robots.MemberWindowFor.
const MemberWindow = time.Minute

// CancelSlot gives back the slot at, reserved with interval, if no later
// slot was reserved since.
func (s *Store) CancelSlot(ctx context.Context, origin robots.OriginKey, at time.Time, interval time.Duration) error {
	_, err := call(ctx, s, "cancel slot", func(ctx context.Context) (any, error) {
		return cancelScript.Run(ctx, s.client, []string{s.key(origin, "slot")},
			micros.Up(at), micros.UpDuration(interval)).Result()
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
			micros.Up(until), keep.Milliseconds()).Result()
	})
	return err
}

// slotMargin is how long a slot key outlives its last slot or pause.
const slotMargin = time.Minute
