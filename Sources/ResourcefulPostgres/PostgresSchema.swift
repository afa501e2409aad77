import Foundation

/// The tables and functions the shared state keeps its rows in, as `Schema.sql` (beside this file,
/// for those who apply it themselves) holds them: a test keeps the two the same.
enum PostgresSchema {
    /// The schema's version, kept in `resourceful.version`.
    static let version = 1

    /// The lock every instance takes while it migrates: a transaction-scoped advisory lock, so that
    /// instances starting at once apply the schema once, and behind a pooler in transaction mode.
    static let migrationLock: Int64 = 0x5265_736F_7572_6365

    /// The whole script.
    static let script = #"""
-- Resourceful's state shared by a fleet, schema version 1, kept in a schema of its own:
-- `resourceful`.
--
-- ResourcefulPostgres creates and migrates it itself (`PostgresSharedState.prepare()`, or on first
-- use), holding a transaction-scoped advisory lock so that instances starting at once apply it
-- once. Apply it yourself when the instances' role may not create a schema, then grant that role
-- USAGE on the schema, SELECT, INSERT, UPDATE and DELETE on its tables and EXECUTE on its
-- functions: the module finds version 1 in `resourceful.version` and changes nothing.
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
CREATE TABLE IF NOT EXISTS resourceful.rate_limits (
    upstream text PRIMARY KEY,
    arrival_us bigint,
    paused_until_us bigint,
    learned_interval_us bigint,
    learned_burst integer,
    learned_until_us bigint,
    touched_us bigint NOT NULL
);
-- step
CREATE INDEX IF NOT EXISTS rate_limits_touched ON resourceful.rate_limits (touched_us);
-- step
CREATE TABLE IF NOT EXISTS resourceful.breakers (
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
CREATE OR REPLACE FUNCTION resourceful.reserve(
    p_upstream text, p_interval_us bigint, p_burst integer, p_max_wait_us bigint,
    OUT granted boolean, OUT wait_us bigint
) LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.rate_limits%ROWTYPE;
    v_interval bigint := p_interval_us;
    v_burst integer := p_burst;
    v_earliest bigint;
    v_arrival bigint;
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
    v_earliest := greatest(coalesce(r.paused_until_us, v_now), v_now);
    IF r.learned_until_us IS NOT NULL AND r.learned_until_us <= v_now THEN
        r.learned_interval_us := NULL;
        r.learned_burst := NULL;
        r.learned_until_us := NULL;
    END IF;
    IF r.learned_interval_us IS NOT NULL AND (v_interval IS NULL OR r.learned_interval_us > v_interval
        OR (r.learned_interval_us = v_interval AND r.learned_burst < v_burst)) THEN
        v_interval := r.learned_interval_us;
        v_burst := r.learned_burst;
    END IF;
    IF v_interval IS NULL THEN
        wait_us := v_earliest - v_now;
        granted := wait_us <= p_max_wait_us;
        v_arrival := r.arrival_us;
    ELSE
        v_arrival := greatest(coalesce(r.arrival_us, v_earliest), v_earliest);
        wait_us := greatest(v_arrival - v_interval * (v_burst - 1), v_earliest) - v_now;
        granted := wait_us <= p_max_wait_us;
        v_arrival := v_arrival + v_interval;
    END IF;
    IF granted THEN
        UPDATE resourceful.rate_limits SET arrival_us = v_arrival, touched_us = v_now,
            learned_interval_us = r.learned_interval_us, learned_burst = r.learned_burst,
            learned_until_us = r.learned_until_us
            WHERE upstream = p_upstream;
        wait_us := greatest(wait_us, 0);
    END IF;
END
$$;
-- step
-- Gives back a place a call took and did not use (it was cancelled while it waited).
CREATE OR REPLACE FUNCTION resourceful.release(p_upstream text, p_interval_us bigint, p_burst integer)
RETURNS void LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.rate_limits%ROWTYPE;
    v_interval bigint := p_interval_us;
BEGIN
    SELECT * INTO r FROM resourceful.rate_limits WHERE upstream = p_upstream FOR UPDATE;
    IF NOT FOUND OR r.arrival_us IS NULL THEN
        RETURN;
    END IF;
    IF r.learned_interval_us IS NOT NULL AND r.learned_until_us > v_now AND (v_interval IS NULL
        OR r.learned_interval_us > v_interval OR (r.learned_interval_us = v_interval AND r.learned_burst < p_burst)) THEN
        v_interval := r.learned_interval_us;
    END IF;
    IF v_interval IS NULL THEN
        RETURN;
    END IF;
    UPDATE resourceful.rate_limits SET arrival_us = greatest(r.arrival_us - v_interval, v_now)
        WHERE upstream = p_upstream;
END
$$;
-- step
-- A half-open breaker's probe slot, for a call of this instance: at most p_probes out at once;
-- slots a killed instance held are taken back after p_lease_us (at once when the row says they
-- were taken in the future: a clock set back, a row written by hand).
CREATE OR REPLACE FUNCTION resourceful.breaker_probe(p_upstream text, p_probes integer, p_lease_us bigint)
RETURNS boolean LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now bigint := resourceful.now_us();
    r resourceful.breakers%ROWTYPE;
BEGIN
    SELECT * INTO r FROM resourceful.breakers WHERE upstream = p_upstream FOR UPDATE;
    IF NOT FOUND OR r.open_until_us > v_now THEN
        RETURN false;
    END IF;
    IF r.probing_since_us IS NULL OR r.probing_since_us < v_now - p_lease_us OR r.probing_since_us > v_now THEN
        UPDATE resourceful.breakers SET probes_out = 1, probes_succeeded = 0, probing_since_us = v_now, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN true;
    END IF;
    IF r.probes_out + r.probes_succeeded >= p_probes THEN
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
        UPDATE resourceful.breakers SET probes_out = greatest(r.probes_out - 1, 0), touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN NULL;
    ELSIF p_outcome = 'failure' THEN
        UPDATE resourceful.breakers SET open_until_us = v_now + p_open_us, failures = 1, calls = 1, probes_out = 0,
            probes_succeeded = 0, probing_since_us = NULL, touched_us = v_now
            WHERE upstream = p_upstream;
        RETURN 'opened';
    ELSIF r.probes_succeeded + 1 >= p_probes THEN
        DELETE FROM resourceful.breakers WHERE upstream = p_upstream;
        RETURN 'closed';
    END IF;
    UPDATE resourceful.breakers SET probes_out = greatest(r.probes_out - 1, 0), probes_succeeded = r.probes_succeeded + 1,
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
-- each rotation, written only over the version read (compare-and-set).
CREATE TABLE IF NOT EXISTS resourceful.refresh_tokens (
    name text PRIMARY KEY,
    version bigint NOT NULL,
    key_id text NOT NULL,
    sealed bytea NOT NULL,
    touched_us bigint NOT NULL
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
"""#

    /// The first object in the schema `resourceful` (the schema itself included) owned by a role
    /// the instances' role is not a member of and that is neither a superuser nor the database's
    /// owner, as `kind name (owner role)`; no row when there is none, or no such schema yet.
    ///
    /// Such an object would run another role's code in the instances' sessions (a function the
    /// migration calls or replaces, a table's trigger): the store refuses the schema instead.
    static let untrustedObject = """
        SELECT o.kind || ' ' || o.name || ' (owner ' || pg_catalog.pg_get_userbyid(o.owner) || ')' FROM (
            SELECT 'schema' AS kind, n.nspname::text AS name, n.nspowner AS owner
                FROM pg_catalog.pg_namespace n WHERE n.nspname = 'resourceful'
            UNION ALL SELECT 'relation', c.relname::text, c.relowner
                FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'resourceful'
            UNION ALL SELECT 'function', p.proname::text, p.proowner
                FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'resourceful'
            UNION ALL SELECT 'type', t.typname::text, t.typowner
                FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'resourceful'
            UNION ALL SELECT 'operator', p.oprname::text, p.oprowner
                FROM pg_catalog.pg_operator p JOIN pg_catalog.pg_namespace n ON n.oid = p.oprnamespace WHERE n.nspname = 'resourceful'
        ) o
        WHERE NOT pg_catalog.pg_has_role(o.owner, 'MEMBER')
            AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = o.owner AND r.rolsuper)
            AND o.owner <> (SELECT d.datdba FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
        LIMIT 1
        """

    /// The script's statements, one migration step each.
    static var steps: [String] {
        script.components(separatedBy: "\n-- step\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
}
