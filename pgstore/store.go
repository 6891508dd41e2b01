// Package pgstore is a robots.Fleet on PostgreSQL, for crawler fleets that
// already run one for their queue: every process given a Store on the same
// database and Schema shares each origin's robots.txt fetch (records by
// compare-and-swap, the fetch lease), its pace (slots, Retry-After pauses,
// members, epoch) and the crawls' budgets, each call one statement, so
// that a paced request costs one round trip.
//
// The tables and functions are made in Options.Schema on first use (and
// again by the call that finds them gone), or ahead of time by Migrate. A row past its expiry counts as missing;
// expired rows are swept in small batches that skip locked rows, so no
// request waits on the sweep. The pool is the caller's (pgx's
// pgxpool.Pool); the Store never closes it.
package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlkit/robots"
)

// Defaults for the zero fields of Options.
const (
	// DefaultSchema is the schema the store's tables live in.
	DefaultSchema = "robots"
	// DefaultTTL is how long a record, and a crawl's budget, is kept
	// after it was last written: past the outage window of
	// robots.DefaultFallbackAfter.
	DefaultTTL = 31 * 24 * time.Hour
	// DefaultTimeout bounds each call, the caller's context included.
	DefaultTimeout = time.Second
	// DefaultCooldown is how long after a failed call the Store answers
	// without trying the server.
	DefaultCooldown = time.Second
	// MigrateTimeout bounds the making of the schema on a Store's first
	// call (or again after it was lost), which the calls asking meanwhile
	// wait on as long as their contexts last: longer than a call's
	// Timeout, since it waits on any other process making it.
	MigrateTimeout = 30 * time.Second
	// DefaultSweepInterval is the least time between two sweeps of
	// expired rows.
	DefaultSweepInterval = time.Minute
)

// Options configures a Store. The zero value of each field is usable.
type Options struct {
	// Schema is the PostgreSQL schema of the store's tables: processes
	// sharing a fleet use the same one. If empty, DefaultSchema.
	Schema string
	// TTL is how long a record and a crawl's budget are kept after their
	// last write. If zero or negative, DefaultTTL.
	TTL time.Duration
	// Timeout bounds each call; a call that takes longer fails, and the
	// transport falls back on its own state for that request. If zero
	// or negative, DefaultTimeout.
	Timeout time.Duration
	// Cooldown is how long after a failed call the Store answers with an
	// error matching robots.ErrStoreSkipped without trying the server,
	// so that an outage does not cost every request a Timeout. If zero,
	// DefaultCooldown; if negative, every call tries the server.
	Cooldown time.Duration
	// Logger records the server failing and recovering. If nil, nothing
	// is logged.
	Logger *slog.Logger
}

// ErrUnavailable is matched by the error of every call the Store could
// not complete: the server failed, did not answer in time, or is being
// left alone for a cooldown (then robots.ErrStoreSkipped matches too).
var ErrUnavailable = errors.New("pgstore: PostgreSQL unavailable")

// Store is a robots.Fleet on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool     *pgxpool.Pool
	schema   string // quoted
	ttl      time.Duration
	timeout  time.Duration
	cooldown time.Duration
	logger   *slog.Logger

	migrate   sync.Mutex // protects running
	running   *migration // the migration under way, nil when none
	migrated  atomic.Bool
	lost      atomic.Bool  // a call found tables or functions gone
	restUntil atomic.Int64 // Unix ns: no call tries the server before it
	down      atomic.Bool  // the last call failed (for the log)
	lastSweep atomic.Int64 // Unix ns

	calls, errs, fallbacks atomic.Int64
}

// A Store is a robots.Fleet, checked where the Store is built.
var _ robots.Fleet = (*Store)(nil)

// New returns a Store on pool.
func New(pool *pgxpool.Pool, opts Options) *Store {
	s := &Store{
		pool:     pool,
		schema:   pgx.Identifier{orDefault(opts.Schema, DefaultSchema)}.Sanitize(),
		ttl:      positiveOr(opts.TTL, DefaultTTL),
		timeout:  positiveOr(opts.Timeout, DefaultTimeout),
		cooldown: opts.Cooldown,
		logger:   opts.Logger,
	}
	switch {
	case s.cooldown == 0:
		s.cooldown = DefaultCooldown
	case s.cooldown < 0:
		s.cooldown = 0
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s
}

// Migrate makes the store's schema, tables and functions if they are
// missing, or replaces those an older version made, and marks the
// schema as this version's (a function that names it). A Store does it
// on its first call unless the schema is marked so, and again when a
// call finds part of it gone; a deployment that gives the crawler no
// rights to create them runs Migrate once, as a role that has them (and
// again after upgrading this package), and grants the crawler USAGE on
// the schema, SELECT, INSERT, UPDATE and DELETE on its tables and
// EXECUTE on its functions. It is safe to run any number of times, from
// any number of processes.
func (s *Store) Migrate(ctx context.Context) error {
	for tries := 1; ; tries++ {
		err := s.migrateOnce(ctx)
		// A connection can see a schema dropped and made again by other
		// processes as it was (its catalog cache, which taking the
		// advisory lock does not refresh): as missing after another made
		// it, failing to make it again as a duplicate, or as there after
		// another dropped it, failing to make its tables in it. A new
		// transaction sees it as it is.
		if err == nil || !duplicate(err) && !missingSchema(err) || tries == migrateTries {
			return err
		}
	}
}

// migrateTries bounds the tries of Migrate that fail on a duplicate or a
// missing schema.
const migrateTries = 3

// duplicate reports an error of an object made twice.
func duplicate(err error) bool {
	switch sqlState(err) {
	case "23505", "42P06", "42P07", "42710", "42723": // unique_violation, duplicate_schema, duplicate_table, duplicate_object, duplicate_function
		return true
	}
	return false
}

// sqlState returns the SQLSTATE of err, a PostgreSQL error, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// migrateOnce is one try of Migrate, in one transaction.
func (s *Store) migrateOnce(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	// Two processes creating the same functions at once would fail: the
	// advisory lock of the transaction makes them take turns.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "pgstore "+s.schema); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(schemaSQL, s.schema)+fmt.Sprintf(versionSQL, s.schema, schemaVersion)); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	s.migrated.Store(true)
	return nil
}

// schemaVersion names the schema Migrate makes, which the function
// pgstore_version returns (versionSQL): a Store that finds it there uses
// the schema as it is, so that a crawler given no rights to create
// (Migrate run once by a role that has them) never runs DDL. A function,
// not a mark on the schema, since a role that may create in a schema
// may not own it.
var schemaVersion = func() string {
	sum := sha256.Sum256([]byte(schemaSQL))
	return "pgstore " + hex.EncodeToString(sum[:8])
}()

// versionSQL makes the function that names the schema's version: %[1]s
// the schema (quoted), %[2]s the version.
const versionSQL = `CREATE OR REPLACE FUNCTION %[1]s.pgstore_version() RETURNS text LANGUAGE sql IMMUTABLE AS $v$ SELECT '%[2]s'::text $v$;`

// migrateIfStale runs Migrate unless the schema is the one it makes, as
// its version function says, and no call found part of it gone since.
func (s *Store) migrateIfStale(ctx context.Context) error {
	if s.lost.Swap(false) {
		return s.Migrate(ctx) // a call found part of the schema gone
	}
	var have string
	err := s.pool.QueryRow(ctx, `SELECT `+s.schema+`.pgstore_version()`).Scan(&have)
	if err == nil && have == schemaVersion {
		s.migrated.Store(true)
		return nil
	}
	return s.Migrate(ctx)
}

// Stats are a Store's counts since it was made.
type Stats struct {
	// Calls counts the calls the Store was given.
	Calls int64
	// Errors counts the calls the server failed or did not answer within
	// Options.Timeout; a call whose caller's context ended first (its
	// cancellation or deadline) is none of them.
	Errors int64
	// Fallbacks counts the calls answered without the server: the ones
	// that failed and the ones skipped during a Cooldown. Each is a
	// request for which the transport used its own state.
	Fallbacks int64
}

// Stats returns the Store's counts.
func (s *Store) Stats() Stats {
	return Stats{Calls: s.calls.Load(), Errors: s.errs.Load(), Fallbacks: s.fallbacks.Load()}
}

// call runs fn, the call op, bounded by the Store's Timeout, after making
// the schema on first use; during a cooldown after a failure it fails at
// once with an error matching robots.ErrStoreSkipped. A caller that gave
// up before or during the call gets its context's error.
func call[T any](ctx context.Context, s *Store, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	s.calls.Add(1)
	if err := robots.CallerGaveUp(ctx); err != nil {
		return zero, err
	}
	if until := s.restUntil.Load(); until != 0 && time.Now().UnixNano() < until {
		s.fallbacks.Add(1)
		return zero, fmt.Errorf("%w: %s: %w (after a failure, for %v)", ErrUnavailable, op, robots.StoreFailed(robots.ErrStoreSkipped), s.cooldown)
	}
	if err := s.ensure(ctx); err != nil {
		return zero, s.failed(ctx, op, err)
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v, err := fn(cctx)
	if err != nil && missingSchema(err) {
		// The tables or functions are gone (an empty restart, a restore
		// from a backup older than them, a schema dropped): a store that
		// lost its state, as Redis restarted empty is, which answers once
		// they are made again, in this call.
		s.lost.Store(true)
		s.migrated.Store(false)
		if err = s.ensure(ctx); err == nil {
			rctx, cancel := context.WithTimeout(ctx, s.timeout)
			defer cancel()
			v, err = fn(rctx)
		}
	}
	if err != nil {
		return zero, s.failed(ctx, op, err)
	}
	if s.down.Swap(false) {
		s.logger.Info("pgstore: PostgreSQL answers again", "op", op)
	}
	s.sweep()
	return v, nil
}

// migration is a Migrate under way for the calls that wait on it: done
// is closed once err is set.
type migration struct {
	done chan struct{}
	err  error
}

// ensure makes the schema unless this Store saw it made: one Migrate at a
// time, shared by the calls that ask meanwhile, each waiting on it while
// its own context lasts. A migration is bounded by MigrateTimeout, not by
// a call's Timeout: DDL waits on another process's migration, and a
// fleet starting together would otherwise fail its first calls and pace
// alone for a Cooldown.
func (s *Store) ensure(ctx context.Context) error {
	if s.migrated.Load() {
		return nil
	}
	s.migrate.Lock()
	m := s.running
	if m == nil {
		m = &migration{done: make(chan struct{})}
		s.running = m
		go func() {
			mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), MigrateTimeout)
			m.err = s.migrateIfStale(mctx)
			cancel()
			s.migrate.Lock()
			s.running = nil
			s.migrate.Unlock()
			close(m.done)
		}()
	}
	s.migrate.Unlock()
	select {
	case <-m.done:
		return m.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// missingSchema reports an error of a table, function or schema that does
// not exist.
func missingSchema(err error) bool {
	switch sqlState(err) {
	case "42P01", "42883", "3F000": // undefined_table, undefined_function, invalid_schema_name
		return true
	}
	return false
}

// failed counts err, the failure of op, starts the cooldown and returns
// it wrapped; when the caller, whose context ctx is, gave up, which says
// nothing about the server, it counts and logs nothing and returns the
// context's error.
func (s *Store) failed(ctx context.Context, op string, err error) error {
	if gone := robots.CallerGaveUp(ctx); gone != nil {
		return gone
	}
	s.errs.Add(1)
	s.fallbacks.Add(1)
	if s.cooldown > 0 {
		s.restUntil.Store(time.Now().Add(s.cooldown).UnixNano())
	}
	if !s.down.Swap(true) {
		s.logger.Warn("pgstore: PostgreSQL failed; the transports fall back on their own state", "op", op, "error", err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, op, robots.StoreFailed(err))
}

// sweep deletes expired rows, at most once per DefaultSweepInterval, in
// the background and in small batches that skip rows a call holds.
func (s *Store) sweep() {
	now := time.Now().UnixNano()
	last := s.lastSweep.Load()
	if now-last < int64(DefaultSweepInterval) || !s.lastSweep.CompareAndSwap(last, now) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*s.timeout)
		defer cancel()
		for _, table := range []string{"records", "leases", "paces", "budgets"} {
			q := fmt.Sprintf(`DELETE FROM %[1]s.%[2]s WHERE ctid IN (SELECT ctid FROM %[1]s.%[2]s WHERE expires < now() LIMIT 1000 FOR UPDATE SKIP LOCKED)`, s.schema, table)
			if table == "budgets" {
				// A book's URLs go with it.
				q = fmt.Sprintf(`WITH gone AS (%s RETURNING crawl) DELETE FROM %s.budget_urls WHERE crawl IN (SELECT crawl FROM gone)`, q, s.schema)
			}
			if _, err := s.pool.Exec(ctx, q); err != nil {
				s.logger.Debug("pgstore: sweep", "table", table, "error", err)
				return
			}
		}
	}()
}

// Load returns the record stored under key, and whether there is one.
func (s *Store) Load(ctx context.Context, key robots.RecordKey) ([]byte, bool, error) {
	type found struct {
		v  []byte
		ok bool
	}
	f, err := call(ctx, s, "load", func(ctx context.Context) (found, error) {
		var v []byte
		err := s.pool.QueryRow(ctx, `SELECT value FROM `+s.schema+`.records WHERE key = $1 AND expires >= now()`, recordKey(key)).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return found{}, nil
		}
		return found{v, err == nil}, err
	})
	return f.v, f.ok, err
}

// Swap stores new under key, for Options.TTL, only if the stored value
// equals old (old nil: only if there is none), in one statement.
func (s *Store) Swap(ctx context.Context, key robots.RecordKey, old, new []byte) (bool, error) {
	return call(ctx, s, "swap", func(ctx context.Context) (bool, error) {
		ttl := s.ttl.Milliseconds()
		var q string
		args := []any{recordKey(key), new, ttl}
		if old == nil {
			q = `INSERT INTO ` + s.schema + `.records AS r (key, value, expires) VALUES ($1, $2, now() + make_interval(secs => $3::bigint / 1e3))
				ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires WHERE r.expires < now()`
		} else {
			q = `UPDATE ` + s.schema + `.records SET value = $2, expires = now() + make_interval(secs => $3::bigint / 1e3)
				WHERE key = $1 AND value = $4 AND expires >= now()`
			args = append(args, old)
		}
		tag, err := s.pool.Exec(ctx, q, args...)
		return err == nil && tag.RowsAffected() == 1, err
	})
}

// Lease takes the lease on fetching origin's robots.txt for ttl if no one
// else holds it, and reports whether token now holds it, in one
// statement; token taking it again holds it for ttl from then.
func (s *Store) Lease(ctx context.Context, origin robots.OriginKey, token string, ttl time.Duration) (bool, error) {
	return call(ctx, s, "lease", func(ctx context.Context) (bool, error) {
		tag, err := s.pool.Exec(ctx, `INSERT INTO `+s.schema+`.leases AS l (origin, token, expires)
			VALUES ($1, $2, now() + make_interval(secs => $3::bigint / 1e3))
			ON CONFLICT (origin) DO UPDATE SET token = EXCLUDED.token, expires = EXCLUDED.expires
			WHERE l.token = EXCLUDED.token OR l.expires < now()`, string(origin), token, max(ttl, time.Millisecond).Milliseconds())
		return err == nil && tag.RowsAffected() == 1, err
	})
}

// Unlease gives up the lease on origin if token still holds it.
func (s *Store) Unlease(ctx context.Context, origin robots.OriginKey, token string) error {
	_, err := call(ctx, s, "unlease", func(ctx context.Context) (struct{}, error) {
		_, err := s.pool.Exec(ctx, `DELETE FROM `+s.schema+`.leases WHERE origin = $1 AND token = $2`, string(origin), token)
		return struct{}{}, err
	})
	return err
}

// recordKey is the key of a record in the records table: the origin,
// then a space and the variant if there is one. A space or a percent sign
// in the origin (none in one a Transport names) is escaped, so that no
// origin's key is another's with a variant.
func recordKey(k robots.RecordKey) string {
	origin := originEscaper.Replace(string(k.Origin))
	if k.Variant == "" {
		return origin
	}
	return origin + " " + k.Variant
}

var originEscaper = strings.NewReplacer("%", "%25", " ", "%20")

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
