package pgstore

// schemaSQL creates the store's tables and functions in the schema %[1]s
// (quoted), each once: CREATE ... IF NOT EXISTS and CREATE OR REPLACE, so
// that Migrate may run any number of times, from any number of
// processes (an advisory lock keeps two from racing).
//
// Times of the pace are the callers' (robots.SlotRequest.Now), in Unix
// microseconds; expires columns are the server's clock, after which a
// row counts as missing, as an expired Redis key would: a pace row
// missing is a store that lost the origin's pace, so it takes the next
// caller's epoch.
const schemaSQL = `
CREATE SCHEMA IF NOT EXISTS %[1]s;

CREATE TABLE IF NOT EXISTS %[1]s.records (
	key     text PRIMARY KEY,
	value   bytea NOT NULL,
	expires timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS %[1]s.leases (
	origin  text PRIMARY KEY,
	token   text NOT NULL,
	expires timestamptz NOT NULL
);

-- members maps each member pacing the origin to when it stops counting:
-- kept in the origin's row, so that a reservation reads and writes one
-- row, as redisstore keeps them in the origin's hash.
CREATE TABLE IF NOT EXISTS %[1]s.paces (
	origin  text PRIMARY KEY,
	last    bigint,
	pause   bigint,
	epoch   text,
	keep    bigint NOT NULL DEFAULT 0,
	members jsonb NOT NULL DEFAULT '{}',
	expires timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS %[1]s.budgets (
	crawl    text PRIMARY KEY,
	spent    bigint NOT NULL DEFAULT 0,
	reserved bigint NOT NULL DEFAULT 0,
	expires  timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS %[1]s.budget_urls (
	crawl text NOT NULL,
	url   text NOT NULL,
	paid  boolean NOT NULL,
	PRIMARY KEY (crawl, url)
);

-- reserve_slot reserves an origin's slot, or with p_peek says which it
-- would reserve: robots.Pace's ReserveSlot and NextSlot, the arithmetic
-- of redisstore's script. The origin's row is locked for the statement
-- (other origins wait on nothing); a row past its expiry is a lost
-- pace, read as empty.
CREATE OR REPLACE FUNCTION %[1]s.reserve_slot(
	p_origin text, p_now bigint, p_at bigint, p_interval bigint, p_limit bigint,
	p_window bigint, p_held bigint, p_spread bigint, p_member text, p_epoch text,
	p_peek boolean, p_margin_ms bigint)
RETURNS TABLE (o_reserved boolean, o_slot bigint, o_members integer, o_epoch text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	r %[1]s.paces%%ROWTYPE;
	v_at bigint := p_at;
	v_last bigint;
	v_epoch text;
	v_reserved boolean := true;
	v_seen bigint;
	v_upto bigint;
	v_members integer;
	v_map jsonb;
	v_cur bigint;
BEGIN
	IF p_peek THEN
		SELECT * INTO r FROM %[1]s.paces WHERE paces.origin = p_origin AND paces.expires >= now();
	ELSE
		INSERT INTO %[1]s.paces (origin, expires) VALUES (p_origin, now()) ON CONFLICT (origin) DO NOTHING;
		SELECT * INTO r FROM %[1]s.paces WHERE paces.origin = p_origin FOR UPDATE;
		IF r.expires < now() THEN
			r.last := NULL; r.pause := NULL; r.epoch := NULL; r.keep := 0; r.members := '{}';
		END IF;
	END IF;
	v_epoch := COALESCE(r.epoch, p_epoch);
	v_last := r.last;
	IF p_held > 0 AND (v_last IS NULL OR v_last < p_held) THEN
		v_last := p_held;
	END IF;
	IF v_last IS NOT NULL AND (p_interval > 0 OR NOT p_peek) AND v_last + p_interval > v_at THEN
		v_at := v_last + p_interval;
	END IF;
	IF r.pause IS NOT NULL AND r.pause > v_at THEN
		v_at := r.pause;
	END IF;
	IF p_peek THEN
		RETURN QUERY SELECT false, v_at, 0, v_epoch;
		RETURN;
	END IF;
	IF p_limit > 0 AND v_at > p_limit THEN
		v_reserved := false;
	END IF;
	v_seen := CASE WHEN v_reserved THEN v_at + p_window ELSE p_now + p_window END;
	-- The members still counting (this one whatever its time), then this
	-- one's time raised to v_seen.
	SELECT COALESCE(jsonb_object_agg(m.key, m.value), '{}'::jsonb), count(*)
		INTO v_map, v_members
		FROM jsonb_each(COALESCE(r.members, '{}'::jsonb)) AS m
		WHERE m.key = p_member OR (m.value #>> '{}')::bigint >= p_now;
	v_cur := (v_map ->> p_member)::bigint;
	IF v_cur IS NULL THEN
		v_members := v_members + 1;
	END IF;
	v_map := v_map || jsonb_build_object(p_member, GREATEST(COALESCE(v_cur, v_seen), v_seen));
	v_upto := GREATEST(v_seen, p_now);
	IF v_last IS NOT NULL THEN
		v_upto := GREATEST(v_upto, v_last + p_interval);
	END IF;
	IF v_reserved THEN
		v_last := v_at + p_spread;
		v_upto := GREATEST(v_upto, v_at + p_spread + p_interval);
	END IF;
	IF r.pause IS NOT NULL THEN
		v_upto := GREATEST(v_upto, r.pause);
	END IF;
	v_upto := GREATEST(v_upto, COALESCE(r.keep, 0));
	UPDATE %[1]s.paces SET last = v_last, pause = r.pause, epoch = v_epoch, keep = v_upto, members = v_map,
		expires = now() + make_interval(secs => (v_upto - p_now) / 1e6 + p_margin_ms / 1e3)
		WHERE paces.origin = p_origin;
	RETURN QUERY SELECT v_reserved, v_at, v_members, v_epoch;
END
$fn$;

-- budget_row locks p_crawl's budget row, made if missing, and returns
-- it; a row past its expiry (or just made) is a book that expired, as a
-- Redis hash does: its spending, its reservations and its URLs are
-- forgotten, so that no URL stays paid in a crawl whose book is gone.
CREATE OR REPLACE FUNCTION %[1]s.budget_row(p_crawl text)
RETURNS %[1]s.budgets
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	b %[1]s.budgets%%ROWTYPE;
BEGIN
	INSERT INTO %[1]s.budgets (crawl, expires) VALUES (p_crawl, '-infinity') ON CONFLICT (crawl) DO NOTHING;
	SELECT * INTO b FROM %[1]s.budgets WHERE budgets.crawl = p_crawl FOR UPDATE;
	IF b.expires < now() THEN
		b.spent := 0; b.reserved := 0;
		DELETE FROM %[1]s.budget_urls WHERE budget_urls.crawl = p_crawl;
	END IF;
	RETURN b;
END
$fn$;

-- reserve_budget sets p_amount aside for p_url in p_crawl's budget of
-- p_limit: answer 1 reserved, 0 past the limit, 2 the URL paid or being
-- paid; left is what the budget has left after it.
CREATE OR REPLACE FUNCTION %[1]s.reserve_budget(p_crawl text, p_url text, p_amount bigint, p_limit bigint, p_ttl_ms bigint)
RETURNS TABLE (o_answer integer, o_remaining bigint)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	b %[1]s.budgets%%ROWTYPE;
	v_left bigint;
BEGIN
	b := %[1]s.budget_row(p_crawl);
	v_left := GREATEST(p_limit - b.spent - b.reserved, 0);
	IF EXISTS (SELECT 1 FROM %[1]s.budget_urls WHERE budget_urls.crawl = p_crawl AND budget_urls.url = p_url) THEN
		o_answer := 2; o_remaining := v_left;
	ELSIF b.spent + b.reserved + p_amount > p_limit THEN
		o_answer := 0; o_remaining := v_left;
	ELSE
		INSERT INTO %[1]s.budget_urls (crawl, url, paid) VALUES (p_crawl, p_url, false);
		b.reserved := b.reserved + p_amount;
		o_answer := 1; o_remaining := GREATEST(v_left - p_amount, 0);
	END IF;
	UPDATE %[1]s.budgets SET spent = b.spent, reserved = b.reserved,
		expires = now() + make_interval(secs => p_ttl_ms / 1e3) WHERE budgets.crawl = p_crawl;
	RETURN NEXT;
END
$fn$;

-- settle_budget ends p_url's reservation of p_reserved with p_charged
-- spent; p_url stays paid.
CREATE OR REPLACE FUNCTION %[1]s.settle_budget(p_crawl text, p_url text, p_reserved bigint, p_charged bigint, p_ttl_ms bigint)
RETURNS void
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	b %[1]s.budgets%%ROWTYPE;
	v_paid boolean;
BEGIN
	b := %[1]s.budget_row(p_crawl);
	SELECT paid INTO v_paid FROM %[1]s.budget_urls WHERE budget_urls.crawl = p_crawl AND budget_urls.url = p_url;
	IF v_paid IS NOT NULL AND NOT v_paid THEN
		b.reserved := GREATEST(b.reserved - p_reserved, 0);
	END IF;
	INSERT INTO %[1]s.budget_urls (crawl, url, paid) VALUES (p_crawl, p_url, true)
		ON CONFLICT (crawl, url) DO UPDATE SET paid = true;
	UPDATE %[1]s.budgets SET spent = b.spent + p_charged, reserved = b.reserved,
		expires = now() + make_interval(secs => p_ttl_ms / 1e3) WHERE budgets.crawl = p_crawl;
END
$fn$;

-- release_budget gives p_url's reservation of p_reserved back: only a
-- URL being paid; a URL paid stays paid.
CREATE OR REPLACE FUNCTION %[1]s.release_budget(p_crawl text, p_url text, p_reserved bigint)
RETURNS void
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
	PERFORM %[1]s.budget_row(p_crawl);
	IF EXISTS (SELECT 1 FROM %[1]s.budget_urls WHERE budget_urls.crawl = p_crawl AND budget_urls.url = p_url AND NOT budget_urls.paid) THEN
		DELETE FROM %[1]s.budget_urls WHERE budget_urls.crawl = p_crawl AND budget_urls.url = p_url;
		UPDATE %[1]s.budgets SET reserved = GREATEST(reserved - p_reserved, 0) WHERE budgets.crawl = p_crawl;
	END IF;
END
$fn$;
`
