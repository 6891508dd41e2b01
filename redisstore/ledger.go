package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
)

// The budget of a crawl is one hash (one hash tag, so one Cluster slot):
// "spent" and "reserved", in millionths, and "u:" and each URL paid ("p")
// or being paid ("r"). Amounts cross as integers a Lua number holds
// exactly up to 2^53 millionths (nine billion units), and are written
// back with string.format('%d'). Each script refreshes the hash's expiry
// to Options.TTL: a crawl's budget lasts as long as its records.
var (
	// reserveScript: KEYS[1] budget; ARGV: the URL, the amount, the
	// limit, the expiry in ms. It returns {answer, left}: answer 1
	// reserved, 0 past the limit, 2 the URL paid or being paid.
	reserveScript = redis.NewScript(`
local amount, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local f = 'u:' .. ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'spent', 'reserved', f)
local spent, reserved = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local left = math.max(limit - spent - reserved, 0)
if h[3] then return {2, string.format('%d', left)} end
if spent + reserved + amount > limit then return {0, string.format('%d', left)} end
redis.call('HSET', KEYS[1], 'reserved', string.format('%d', reserved + amount), f, 'r')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, string.format('%d', math.max(left - amount, 0))}
`)

	// settleScript: KEYS[1] budget; ARGV: the URL, the amount reserved,
	// the amount charged, the expiry in ms.
	settleScript = redis.NewScript(`
local f = 'u:' .. ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'spent', 'reserved', f)
local spent, reserved = tonumber(h[1]) or 0, tonumber(h[2]) or 0
if h[3] == 'r' then reserved = math.max(reserved - tonumber(ARGV[2]), 0) end
redis.call('HSET', KEYS[1], 'spent', string.format('%d', spent + tonumber(ARGV[3])), 'reserved', string.format('%d', reserved), f, 'p')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 0
`)

	// releaseScript: KEYS[1] budget; ARGV: the URL, the amount
	// reserved. Only a reservation is given back: a URL paid stays paid.
	releaseScript = redis.NewScript(`
local f = 'u:' .. ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'reserved', f)
if h[2] ~= 'r' then return 0 end
local reserved = math.max((tonumber(h[1]) or 0) - tonumber(ARGV[2]), 0)
redis.call('HSET', KEYS[1], 'reserved', string.format('%d', reserved))
redis.call('HDEL', KEYS[1], f)
return 1
`)
)

// Reserve sets amount aside from crawl's budget of limit for url, in one
// round trip, unless url is paid or being paid in crawl or the budget
// would pass limit: every process on the same Redis spends from one
// budget.
func (s *Store) Reserve(ctx context.Context, crawl, url string, amount, limit int64) (robots.Reservation, error) {
	reply, err := call(ctx, s, "reserve", func(ctx context.Context) ([]any, error) {
		r, err := reserveScript.Run(ctx, s.client, []string{s.budgetKey(crawl)},
			url, amount, limit, s.ttl.Milliseconds()).Slice()
		if err == nil && len(r) != 2 {
			err = fmt.Errorf("reply %v is not {answer, left}", r)
		}
		return r, err
	})
	if err != nil {
		return robots.Reservation{}, err
	}
	answer, ok1 := reply[0].(int64)
	left, ok2 := reply[1].(string)
	var n int64
	if _, err := fmt.Sscan(left, &n); !ok1 || !ok2 || err != nil {
		return robots.Reservation{}, fmt.Errorf("%w: reserve: reply %v is not {answer, left}", ErrUnavailable, reply)
	}
	return robots.Reservation{Reserved: answer == 1, Paid: answer == 2, Left: n}, nil
}

// Settle ends url's reservation of reserved with charged spent, in one
// round trip: url stays paid in crawl.
func (s *Store) Settle(ctx context.Context, crawl, url string, reserved, charged int64) error {
	_, err := call(ctx, s, "settle", func(ctx context.Context) (any, error) {
		return settleScript.Run(ctx, s.client, []string{s.budgetKey(crawl)},
			url, reserved, charged, s.ttl.Milliseconds()).Result()
	})
	return err
}

// Release gives url's reservation of reserved back, unspent, in one
// round trip.
func (s *Store) Release(ctx context.Context, crawl, url string, reserved int64) error {
	_, err := call(ctx, s, "release", func(ctx context.Context) (any, error) {
		return releaseScript.Run(ctx, s.client, []string{s.budgetKey(crawl)}, url, reserved).Result()
	})
	return err
}

// budgetKey is the Redis key of crawl's budget, its own hash tag.
func (s *Store) budgetKey(crawl string) string {
	return s.prefix + "rs1:{crawl " + crawl + "}:budget"
}
