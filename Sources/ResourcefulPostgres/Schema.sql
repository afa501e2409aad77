-- Resourceful's state shared by a fleet, schema version 4, kept in a schema of its own:
-- `resourceful`.
--
-- ResourcefulPostgres creates and migrates it itself (`PostgresSharedState.prepare()`, or on first
-- use), holding a transaction-scoped advisory lock so that instances starting at once apply it
-- once (a database already at this version is only read, without the lock). Apply it yourself when the instances' role may not create a schema, then grant that role
-- USAGE on the schema, SELECT, INSERT, UPDATE and DELETE on its tables and EXECUTE on its
-- functions: the module finds version 4 in `resourceful.version` and changes nothing. A database
-- at an earlier version is brought to this one by applying the whole script again: each step
-- may be applied any number of times.
--
-- The module uses the schema only when the schema and everything in it belong to the instances'
-- role (or a role it is a member of), to a superuser or to the database's owner: no other role's
-- code runs in the instances' sessions. The functions run with `search_path` set to
-- `pg_catalog, pg_temp` and name every table by its schema.
--
-- Times are microseconds since 1970 by the database server's clock (`resourceful.now_us()`), so
-- that the instances' own clocks do not matter. Each statement below is one migration step; they
-- are separated by lines holding only `-- step`.

CREATE SCHEMA IF NOT EXISTS resourceful;
-- step
CREATE TABLE IF NOT EXISTS resourceful.version (version integer NOT NULL);
-- step
-- Budgets and breakers are the fleet's state of the moment, not data to keep: their tables are
-- unlogged (no WAL, so no flush to disk per call); a crash of the server empties them, and the
-- fleet starts its budgets afresh.
CREATE UNLOGGED TABLE IF NOT EXISTS resourceful.rate_limits (
    upstream text PRIMARY KEY,
    arrival_us bigint,
    paused_until_us bigint,
    learned_interval_us bigint,
    learned_burst integer,
    learned_until_us bigint,
    touched_us bigint NOT NULL,
    paused_since_us bigint,
    capped_arrival_us bigint
);
-- step
-- When a pause was last asked for, and the queue of callers that keep shorter pauses.
ALTER TABLE resourceful.rate_limits ADD COLUMN IF NOT EXISTS paused_since_us bigint;
-- step
ALTER TABLE resourceful.rate_limits ADD COLUMN IF NOT EXISTS capped_arrival_us bigint;
-- step
CREATE INDEX IF NOT EXISTS rate_limits_touched ON resourceful.rate_limits (touched_us);
-- step
CREATE UNLOGGED TABLE IF NOT EXISTS resourceful.breakers (
    upstream text PRIMARY KEY,
    open_until_us bigint NOT NULL,
    failures integer NOT NULL,
    calls integer NOT NULL,
    probes_out integer NOT NULL DEFAULT 0,
    probes_succeeded integer NOT NULL DEFAULT 0,
    probing_since_us bigint,
    touched_us bigint NOT NULL
);
-- step
CREATE OR REPLACE FUNCTION resourceful.now_us() RETURNS bigint LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
$$;
-- step
-- A place in an upstream's budget (GCRA: one theoretical arrival time per upstream), under the
-- tighter of the configured budget (p_interval_us, p_burst; NULL for none) and the one learned
-- from the upstream, after any pause. Granted with the wait before sending, or refused with the
-- wait it would have needed when that is longer than p_max_wait_us (nothing is then taken).
--
-- A caller keeps no pause longer than p_max_pause_us from when a pause was last asked for
-- (`paused_since_us`), as an instance configured so would have written it: when the row's pause
-- is longer (another instance keeps longer ones, and the row keeps it for them), the caller's
-- pause ends earlier, at a fixed time, and its places until the row's pause ends are taken on a
-- queue of their own (`capped_arrival_us`, on the real clock), never behind the row's pause; a
-- place that would come after the row's pause is taken on the row's queue, which starts after
-- the last place of that queue, so that no place is counted twice or sent beside another.
--
-- A pause or a learned budget's lifetime past a day, which no instance writes, is cut to a day in
-- the row, so that it ends.
CREATE OR REPLACE FUNCTION resourceful.reserve(
    p_upstream text, p_interval_us bigint, p_burst integer, p_max_wait_us bigint, p_max_pause_us bigint,
    OUT granted boolean, OUT wait_us bigint
) LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.rate_limits%ROWTYPE;
    v_interval bigint := p_interval_us;
    v_burst integer := p_burst;
    v_longest bigint := least(greatest(coalesce(p_max_pause_us, 86400000000), 0), 86400000000);
    v_end bigint;
    v_mine bigint;
    v_capped boolean := false;
    v_arrival bigint;
    v_slot bigint;
    v_learned bigint;
    v_changed boolean := false;
BEGIN
    SELECT * INTO r FROM resourceful.rate_limits WHERE upstream = p_upstream FOR UPDATE;
    IF NOT FOUND THEN
        IF p_interval_us IS NULL THEN
            granted := true;
            wait_us := 0;
            RETURN;
        END IF;
        INSERT INTO resourceful.rate_limits (upstream, touched_us) VALUES (p_upstream, v_now)
            ON CONFLICT (upstream) DO NOTHING;
        SELECT * INTO r FROM resourceful.rate_limits WHERE upstream = p_upstream FOR UPDATE;
    END IF;
    -- What a row holds is held to what the instances write (a pause and a learned budget's
    -- lifetime of at most a day, a budget of at least one request a day and at most a million
    -- at once), so that no value written by hand overflows, lifts a budget or holds the fleet for
    -- ever.
    IF r.paused_until_us > v_now + 86400000000 THEN
        r.paused_until_us := v_now + 86400000000;
        v_changed := true;
    END IF;
    IF r.learned_until_us > v_now + 86400000000 THEN
        r.learned_until_us := v_now + 86400000000;
        v_changed := true;
    END IF;
    -- A pause that does not say since when (written by hand, or by an earlier build) is taken as
    -- lengthened now; one said to be lengthened in the future (a clock set back), likewise.
    IF r.paused_until_us > v_now AND (r.paused_since_us IS NULL OR r.paused_since_us > v_now) THEN
        r.paused_since_us := v_now;
        v_changed := true;
    END IF;
    -- When the row's pause ends (now when there is none), and when it ends for this caller.
    v_end := greatest(coalesce(r.paused_until_us, v_now), v_now);
    v_mine := v_end;
    IF v_end > v_now THEN
        v_mine := least(v_end, greatest(r.paused_since_us + v_longest, v_now));
        v_capped := v_mine < v_end;
    END IF;
    IF r.learned_interval_us IS NOT NULL AND (r.learned_until_us IS NULL OR r.learned_until_us <= v_now) THEN
        r.learned_interval_us := NULL;
        r.learned_burst := NULL;
        r.learned_until_us := NULL;
    END IF;
    -- Each field at its tighter value: neither the configured budget nor the learned one is passed.
    IF r.learned_interval_us IS NOT NULL THEN
        -- A learned budget spaces this caller's calls no further apart than its longest pause.
        v_learned := least(r.learned_interval_us, greatest(v_longest, 1));
        v_interval := greatest(coalesce(v_interval, 1), v_learned);
        v_burst := least(coalesce(v_burst, 1000000), coalesce(r.learned_burst, 1));
    END IF;
    IF v_interval IS NOT NULL THEN
        v_interval := least(greatest(v_interval, 1), 86400000000);
        v_burst := least(greatest(coalesce(v_burst, 1), 1), 1000000);
    END IF;
    IF v_interval IS NULL THEN
        wait_us := v_mine - v_now;
        granted := wait_us <= p_max_wait_us;
    ELSE
        IF v_capped THEN
            -- After this caller's pause, spaced by the budget from the places of its kind (and
            -- from any taken before the pause), while they come before the row's pause ends.
            v_arrival := least(greatest(v_mine, coalesce(r.capped_arrival_us, v_mine),
                CASE WHEN r.arrival_us < v_end THEN r.arrival_us ELSE v_mine END), v_now + 4000000000000000);
            v_slot := greatest(v_arrival - v_interval * (v_burst - 1), v_mine);
            -- Only while the queue's arrival after this place is not past the row's pause end:
            -- the places booked after it (a burst's at once) then follow as one budget would let
            -- them. A later place is taken on the row's queue.
            v_capped := v_arrival + v_interval <= v_end;
        END IF;
        IF NOT v_capped THEN
            v_arrival := least(greatest(coalesce(r.arrival_us, v_end), coalesce(r.capped_arrival_us, v_end), v_end),
                v_now + 4000000000000000);
            v_slot := greatest(v_arrival - v_interval * (v_burst - 1), v_end);
        END IF;
        wait_us := v_slot - v_now;
        granted := wait_us <= p_max_wait_us;
        v_arrival := v_arrival + v_interval;
        IF v_capped THEN
            r.capped_arrival_us := v_arrival;
        ELSE
            r.arrival_us := v_arrival;
        END IF;
    END IF;
    IF granted THEN
        UPDATE resourceful.rate_limits SET arrival_us = r.arrival_us, capped_arrival_us = r.capped_arrival_us,
            touched_us = v_now, paused_until_us = r.paused_until_us, paused_since_us = r.paused_since_us,
            learned_interval_us = r.learned_interval_us, learned_burst = r.learned_burst,
            learned_until_us = r.learned_until_us
            WHERE upstream = p_upstream;
        wait_us := greatest(wait_us, 0);
    ELSIF v_changed THEN
        UPDATE resourceful.rate_limits SET paused_until_us = r.paused_until_us, paused_since_us = r.paused_since_us,
            learned_interval_us = r.learned_interval_us, learned_burst = r.learned_burst,
            learned_until_us = r.learned_until_us
            WHERE upstream = p_upstream;
    END IF;
END
$$;
-- step
-- The reservation of a build that passes no longest pause: a day.
CREATE OR REPLACE FUNCTION resourceful.reserve(
    p_upstream text, p_interval_us bigint, p_burst integer, p_max_wait_us bigint,
    OUT granted boolean, OUT wait_us bigint
) LANGUAGE sql
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.granted, r.wait_us FROM resourceful.reserve(p_upstream, p_interval_us, p_burst, p_max_wait_us, 86400000000) r
$$;
-- step
-- Pauses an upstream for p_length_us from now (at most a day), unless a longer pause is kept;
-- true when the pause is new or longer. Either way the pause was asked for now
-- (`paused_since_us`): a caller keeping shorter pauses than the row's keeps its own from then.
CREATE OR REPLACE FUNCTION resourceful.pause(p_upstream text, p_length_us bigint)
RETURNS boolean LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    v_until bigint := v_now + least(greatest(coalesce(p_length_us, 0), 0), 86400000000);
    r resourceful.rate_limits%ROWTYPE;
BEGIN
    INSERT INTO resourceful.rate_limits (upstream, touched_us) VALUES (p_upstream, v_now)
        ON CONFLICT (upstream) DO NOTHING;
    SELECT * INTO r FROM resourceful.rate_limits WHERE upstream = p_upstream FOR UPDATE;
    IF r.paused_until_us IS NULL OR r.paused_until_us < v_until THEN
        UPDATE resourceful.rate_limits SET paused_until_us = v_until, paused_since_us = v_now, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN true;
    END IF;
    UPDATE resourceful.rate_limits SET paused_since_us = v_now, touched_us = v_now WHERE upstream = p_upstream;
    RETURN false;
END
$$;
-- step
-- Gives back a place a call took and did not use (it was cancelled while it waited): the last
-- place of the row's queue. A caller keeping shorter pauses than the row's (p_max_pause_us, as in
-- `reserve`) gives nothing back while that pause lasts: its place may be on either queue, and a
-- place given back on the wrong one would send two calls at once (one held too long is safe).
CREATE OR REPLACE FUNCTION resourceful.release(p_upstream text, p_interval_us bigint, p_burst integer, p_max_pause_us bigint)
RETURNS void LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.rate_limits%ROWTYPE;
    v_interval bigint := p_interval_us;
    v_longest bigint := least(greatest(coalesce(p_max_pause_us, 86400000000), 0), 86400000000);
BEGIN
    SELECT * INTO r FROM resourceful.rate_limits WHERE upstream = p_upstream FOR UPDATE;
    IF NOT FOUND OR r.arrival_us IS NULL THEN
        RETURN;
    END IF;
    IF r.paused_until_us > v_now AND coalesce(least(r.paused_since_us, v_now), v_now) + v_longest < least(r.paused_until_us, v_now + 86400000000) THEN
        RETURN;
    END IF;
    IF r.learned_interval_us IS NOT NULL AND r.learned_until_us > v_now THEN
        v_interval := greatest(coalesce(v_interval, 1), least(r.learned_interval_us, greatest(v_longest, 1)));
    END IF;
    IF v_interval IS NULL THEN
        RETURN;
    END IF;
    v_interval := least(greatest(v_interval, 1), 86400000000);
    UPDATE resourceful.rate_limits SET arrival_us = greatest(greatest(least(r.arrival_us, v_now + 4000000000000000), v_now) - v_interval, v_now)
        WHERE upstream = p_upstream;
END
$$;
-- step
-- The release of a build that passes no longest pause: a day.
CREATE OR REPLACE FUNCTION resourceful.release(p_upstream text, p_interval_us bigint, p_burst integer)
RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT resourceful.release(p_upstream, p_interval_us, p_burst, 86400000000)
$$;
-- step
-- A half-open breaker's probe slot, for a call of this instance: at most p_probes out at once;
-- slots a killed instance held are taken back after p_lease_us (at once when the row says they
-- were taken in the future: a clock set back, a row written by hand). An opening past a day from
-- now, which no instance writes, is cut to a day in the row, so that it ends.
CREATE OR REPLACE FUNCTION resourceful.breaker_probe(p_upstream text, p_probes integer, p_lease_us bigint)
RETURNS boolean LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.breakers%ROWTYPE;
BEGIN
    SELECT * INTO r FROM resourceful.breakers WHERE upstream = p_upstream FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF r.open_until_us > v_now + 86400000000 THEN
        UPDATE resourceful.breakers SET open_until_us = v_now + 86400000000, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN false;
    END IF;
    IF r.open_until_us > v_now THEN
        RETURN false;
    END IF;
    IF r.probing_since_us IS NULL OR r.probing_since_us < v_now - p_lease_us OR r.probing_since_us > v_now THEN
        UPDATE resourceful.breakers SET probes_out = 1, probes_succeeded = 0, probing_since_us = v_now, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN true;
    END IF;
    IF r.probes_out::bigint + r.probes_succeeded >= p_probes THEN
        RETURN false;
    END IF;
    UPDATE resourceful.breakers SET probes_out = r.probes_out + 1, touched_us = v_now WHERE upstream = p_upstream;
    RETURN true;
END
$$;
-- step
-- What a probe's call came to ('success', 'failure' or 'abandoned'): 'closed' when the last
-- probe needed succeeded, 'opened' when one failed, NULL otherwise.
CREATE OR REPLACE FUNCTION resourceful.breaker_probed(p_upstream text, p_outcome text, p_probes integer, p_open_us bigint)
RETURNS text LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.breakers%ROWTYPE;
BEGIN
    SELECT * INTO r FROM resourceful.breakers WHERE upstream = p_upstream FOR UPDATE;
    IF NOT FOUND OR r.probing_since_us IS NULL THEN
        RETURN NULL;
    END IF;
    IF p_outcome = 'abandoned' THEN
        UPDATE resourceful.breakers SET probes_out = greatest(r.probes_out, 1) - 1, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN NULL;
    ELSIF p_outcome = 'failure' THEN
        UPDATE resourceful.breakers SET open_until_us = v_now + p_open_us, failures = 1, calls = 1, probes_out = 0,
            probes_succeeded = 0, probing_since_us = NULL, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN 'opened';
    ELSIF r.probes_succeeded::bigint + 1 >= p_probes THEN
        DELETE FROM resourceful.breakers WHERE upstream = p_upstream;
        RETURN 'closed';
    END IF;
    UPDATE resourceful.breakers SET probes_out = greatest(r.probes_out, 1) - 1, probes_succeeded = least(r.probes_succeeded, 1000000) + 1,
        touched_us = v_now
        WHERE upstream = p_upstream;
    RETURN NULL;
END
$$;
-- step
-- OAuth 2 access tokens, one row per token endpoint, client, scopes, audience and resource
-- (`name`: their SHA-256), sealed with AES-256-GCM under the key `key_id` names.
CREATE TABLE IF NOT EXISTS resourceful.tokens (
    name text PRIMARY KEY,
    key_id text NOT NULL,
    sealed bytea NOT NULL,
    renew_at_us bigint NOT NULL,
    touched_us bigint NOT NULL
);
-- step
-- Rotating refresh tokens, one row per service and client, sealed; `version` grows by one with
-- each rotation, written only over the version read (compare-and-set); a token being spent is
-- marked (`claim_id`, until `claimed_until_us`) so that no other instance spends it meanwhile.
CREATE TABLE IF NOT EXISTS resourceful.refresh_tokens (
    name text PRIMARY KEY,
    version bigint NOT NULL,
    key_id text NOT NULL,
    sealed bytea NOT NULL,
    touched_us bigint NOT NULL,
    claim_id text NOT NULL DEFAULT '',
    claimed_until_us bigint NOT NULL DEFAULT 0
);
-- step
ALTER TABLE resourceful.refresh_tokens ADD COLUMN IF NOT EXISTS claim_id text NOT NULL DEFAULT '';
-- step
ALTER TABLE resourceful.refresh_tokens ADD COLUMN IF NOT EXISTS claimed_until_us bigint NOT NULL DEFAULT 0;
-- step
-- Leases: a row per lease (a shared token's renewal, the HTTP cache's writes), locked by the
-- transaction that holds it. A row lock takes privileges on this table, which only the fleet's
-- role has; an advisory lock any role that may connect could take, and hold the fleet up.
CREATE UNLOGGED TABLE IF NOT EXISTS resourceful.leases (
    name text PRIMARY KEY,
    taken_us bigint NOT NULL
);
-- step
-- The HTTP cache's entries, one row per storage key (`name`: its SHA-256); an entry for a
-- credentialed request is sealed (`key_id` set), others are kept as they are.
CREATE TABLE IF NOT EXISTS resourceful.http_cache (
    name text PRIMARY KEY,
    key_id text,
    entry bytea NOT NULL,
    size bigint NOT NULL,
    expires_us bigint NOT NULL,
    used_us bigint NOT NULL
);
-- step
CREATE INDEX IF NOT EXISTS http_cache_used ON resourceful.http_cache (used_us);
