package pgstore

import (
	"context"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/micros"
)

// slotMargin is how long a pace row outlives its last slot or pause.
const slotMargin = time.Minute

// ReserveSlot reserves origin's earliest slot for req, as robots.Pace's
// ReserveSlot says, in one statement: the reserve_slot function, which
// locks the origin's row alone. Slot.Epoch is the origin's epoch: a
// store that lost the row (its tables truncated, restored from an old
// backup) takes req.Epoch, which tells the members the slots they hold
// are unknown to it.
func (s *Store) ReserveSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (robots.Slot, error) {
	return s.slot(ctx, "reserve slot", origin, req, false)
}

// NextSlot returns the slot ReserveSlot would reserve for req, reserving
// nothing and counting no member, in one statement.
func (s *Store) NextSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (time.Time, error) {
	slot, err := s.slot(ctx, "next slot", origin, req, true)
	return slot.At, err
}

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
	epoch := req.Epoch
	if epoch == "" {
		epoch = "-"
	}
	return call(ctx, s, op, func(ctx context.Context) (robots.Slot, error) {
		var slot robots.Slot
		var at int64
		var members int32
		err := s.pool.QueryRow(ctx, `SELECT o_reserved, o_slot, o_members, o_epoch FROM `+s.schema+`.reserve_slot($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			string(origin), micros.Up(req.Now), micros.Up(from), micros.UpDuration(interval), lim,
			micros.UpDuration(robots.MemberWindowFor(interval)), held, micros.UpDuration(req.Spread),
			req.Member, epoch, peek, slotMargin.Milliseconds()).Scan(&slot.Reserved, &at, &members, &slot.Epoch)
		slot.At, slot.Members = time.UnixMicro(at).In(req.Now.Location()), int(members)
		return slot, err
	})
}

// CancelSlot gives back the slot at, reserved with interval, if no later
// slot was reserved since, in one statement.
func (s *Store) CancelSlot(ctx context.Context, origin robots.OriginKey, at time.Time, interval time.Duration) error {
	_, err := call(ctx, s, "cancel slot", func(ctx context.Context) (struct{}, error) {
		_, err := s.pool.Exec(ctx, `UPDATE `+s.schema+`.paces SET last = $2::bigint - $3::bigint WHERE origin = $1 AND last = $2 AND expires >= now()`,
			string(origin), micros.Up(at), micros.UpDuration(interval))
		return struct{}{}, err
	})
	return err
}

// Pause holds every slot of origin reserved from now on until at least
// until, for every process, in one statement. A pause only grows.
func (s *Store) Pause(ctx context.Context, origin robots.OriginKey, until time.Time) error {
	keep := min(max(time.Until(until), 0), s.ttl) + slotMargin
	_, err := call(ctx, s, "pause", func(ctx context.Context) (struct{}, error) {
		_, err := s.pool.Exec(ctx, `INSERT INTO `+s.schema+`.paces AS p (origin, pause, expires)
			VALUES ($1, $2, now() + make_interval(secs => $3::bigint / 1e3))
			ON CONFLICT (origin) DO UPDATE SET
				pause = CASE WHEN p.expires < now() THEN EXCLUDED.pause ELSE GREATEST(COALESCE(p.pause, 0), EXCLUDED.pause) END,
				last = CASE WHEN p.expires < now() THEN NULL ELSE p.last END,
				epoch = CASE WHEN p.expires < now() THEN NULL ELSE p.epoch END,
				members = CASE WHEN p.expires < now() THEN '{}' ELSE p.members END,
				expires = GREATEST(p.expires, EXCLUDED.expires)`,
			string(origin), micros.Up(until), keep.Milliseconds())
		return struct{}{}, err
	})
	return err
}
