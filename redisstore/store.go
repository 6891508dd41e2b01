// Package redisstore is a fleet store for robots.Transport on Redis: every
// process of a crawler fleet that is given a Store over the same Redis shares
// one robots.txt record per origin, one fetch per origin (a lease) and one
// pace per origin (slots, Retry-After pauses, and the count of members
// pacing it).
//
// A Store implements robots.Fleet, so robots.Options{Fleet: store} is the
// whole integration. Package fleettest checks it against that contract.
//
// Redis failing is not robots.txt failing: every call is bounded by
// Options.Timeout; a call that fails returns ErrUnavailable, and the
// transport falls back to its own in-memory state and pacing for
// that request. After a failure the Store does not try Redis again for
// Options.Cooldown, so an outage costs a request at most one Timeout.
//
// Keys are Prefix + "rs1:{" + origin + "}:" + kind, the origin being the
// robots.OriginKey the transport gives, used as it is. "rs1" is the key
// format version; the record bytes carry the transport's own format
// version. The origin in braces is a Redis Cluster hash tag: every key of
// one origin lives in one slot, so each script, which touches the keys of
// one origin only, runs on Cluster.
package redisstore

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
)

// Defaults for the zero fields of Options.
const (
	// DefaultTTL is how long a record is kept after its last write: the
	// transport's 30-day outage window (robots.DefaultFallbackAfter) plus
	// its 24-hour freshness (robots.DefaultFreshness), so that the outage
	// clock and the last good copy outlive the longest outage the
	// transport waits out.
	DefaultTTL = 31 * 24 * time.Hour
	// DefaultTimeout bounds one call to Redis.
	DefaultTimeout = time.Second
	// DefaultCooldown is how long a Store leaves Redis alone after a
	// failed call.
	DefaultCooldown = time.Second
	// DefaultLogInterval is the least time between two log lines about
	// Redis failing or recovering.
	DefaultLogInterval = time.Minute
)

// Options configures a Store. The zero value works.
type Options struct {
	// Prefix starts every key the Store writes, so that several fleets,
	// or other data, can share one Redis. It should not contain "{",
	// which would change the Cluster hash tag of every key. If empty,
	// keys start with "rs1:".
	Prefix string
	// TTL is how long a record is kept after its last write. Raise it
	// with the transport's FallbackAfter and Freshness, so that records
	// outlive the outage window. If zero or negative, DefaultTTL (31
	// days) is used.
	TTL time.Duration
	// Timeout bounds each call to Redis, the caller's context included:
	// a call that takes longer fails and the transport falls back to its
	// own state for that request. A caller's deadline ends its call
	// when it comes first; a cancel is heard only at the earlier of the
	// two, since go-redis stops waiting for a reply at its context's
	// deadline but not at a cancel, and heeding a cancel
	// would take a goroutine per call, which more than doubles what a
	// paced request costs the client (its stack grown for go-redis).
	// If zero or negative, DefaultTimeout (1 s) is used.
	Timeout time.Duration
	// Cooldown is how long, after a failed call, the Store answers
	// ErrUnavailable without trying Redis, so that an
	// outage does not cost every request a Timeout. If zero,
	// DefaultCooldown (1 s) is used; if negative, every call tries Redis.
	Cooldown time.Duration
	// Logger records Redis failing (with the error and how many calls
	// failed since the last line) and recovering, at most once per
	// LogInterval. If nil, nothing is logged.
	Logger *slog.Logger
	// LogInterval is the least time between two log lines. If zero or
	// negative, DefaultLogInterval (1 minute) is used.
	LogInterval time.Duration
}

// Store is a robots.Fleet on Redis, shared by every process given a Store
// over the same Redis and Prefix. It is safe for concurrent use.
type Store struct {
	client  redis.UniversalClient
	prefix  string
	ttl     time.Duration
	timeout time.Duration
	health  health
}

// New returns a Store on client. The client is the caller's: the Store
// never closes it; it adds a hook that records the client's failed dials,
// so that the Store's log line names their cause. Set
// ContextTimeoutEnabled in the client's options: each call is bounded by
// Options.Timeout through its context, which go-redis otherwise ignores,
// leaving a call to its own read and dial timeouts (New logs a warning
// when a *redis.Client or *redis.ClusterClient has it off). On a
// *redis.ClusterClient (or a client with its ReloadState method), a
// failed call asks the client to reload the cluster's slot map, at most
// once a Cooldown (a second without one): go-redis otherwise reloads it
// only every ClusterStateReloadInterval (a minute by default) or on a
// MOVED reply, so after a failover it would go on dialling the master
// that died.
func New(client redis.UniversalClient, opts Options) *Store {
	s := &Store{
		client:  client,
		prefix:  opts.Prefix,
		ttl:     positiveOr(opts.TTL, DefaultTTL),
		timeout: positiveOr(opts.Timeout, DefaultTimeout),
	}
	cooldown := opts.Cooldown
	switch {
	case cooldown == 0:
		cooldown = DefaultCooldown
	case cooldown < 0:
		cooldown = 0
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s.health.init(cooldown, positiveOr(opts.LogInterval, DefaultLogInterval), logger)
	if cc, ok := client.(interface{ ReloadState(context.Context) }); ok {
		s.health.reload = func() { cc.ReloadState(context.Background()) }
	}
	client.AddHook(dialHook{&s.health})
	if !contextTimeouts(client) {
		logger.Warn("redisstore: the Redis client has ContextTimeoutEnabled off; calls may outlast Options.Timeout", "timeout", s.timeout)
	}
	return s
}

// Load returns the robots record stored under key, and whether there is
// one, in one round trip.
func (s *Store) Load(ctx context.Context, key robots.RecordKey) ([]byte, bool, error) {
	found := false
	val, err := call(ctx, s, "load", func(ctx context.Context) ([]byte, error) {
		v, err := s.client.Get(ctx, s.recordKey(key)).Bytes()
		if err == redis.Nil {
			return nil, nil
		}
		found = err == nil
		return v, err
	})
	return val, found && err == nil, err
}

// A Store is a robots.Fleet, checked where the Store is built.
var _ robots.Fleet = (*Store)(nil)

// recordKey is the Redis key of a robots record.
func (s *Store) recordKey(k robots.RecordKey) string {
	key := s.key(k.Origin, "record")
	if k.Variant != "" {
		key += " " + k.Variant
	}
	return key
}

// key is the Redis key of kind for origin, which is its hash tag.
func (s *Store) key(origin robots.OriginKey, kind string) string {
	return s.prefix + "rs1:{" + string(origin) + "}:" + kind
}

// contextTimeouts reports whether client heeds its context's deadline;
// true when its kind does not tell.
func contextTimeouts(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return true
}

func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
