-- Metering in groups, each counter row written once per group: a group's
-- requests of one account (a busy client's concurrent requests, usually
-- of one key) were metered one by one by meter_group (migration 021), each
-- with four upserts (account window, key window, account month, key day),
-- and those upserts were most of metering's PostgreSQL time.
-- meter_group_coalesced takes the same arguments and returns the same rows,
-- decides every request in order, exactly as meter_group did, but writes
-- each counter row once for all the group's requests that touch it:
--
--   - the account's window row is raised by the number of the account's
--     requests in that window, and its new count tells each request its
--     own place in the window (the count before the group plus its rank);
--   - the key's window row is raised by its requests' number;
--   - the account's month row is charged once with the credits of every
--     request the window and the plan admit, in one UPDATE whose WHERE
--     (re-evaluated on the latest row version under its lock) checks that
--     all of them fit. When they do not all fit, or the row does not exist
--     yet, the row is locked (inserted first if missing), the requests are
--     charged one by one in order while their credits fit, as the
--     one-request upsert did, and the row is updated once;
--   - the key's day row is raised by the requests charged and their
--     credits.
--
-- The requests of an account are taken in window order, then by key, then
-- in arrival order: a group's requests are concurrent, so this is one order
-- in which they could have arrived, and every window count, refusal and
-- charge is the one that order gives. An account with one request in the
-- group (a group of many clients' requests) has its four rows written for
-- it alone, as meter_group did, without the gathering.
--
-- Row locks: accounts in id order; per account its window rows (in window
-- order), each followed by its keys' window rows, then its month rows, then
-- its keys' day rows. Two groups (of this process or another) take every
-- account's rows in one order and cannot deadlock; a key's window row is
-- only ever locked under its account's window row, and a key's day row
-- under its account's month row (as the refund and the stream's charge
-- take them), so their order among themselves does not matter.
--
-- The caller computes each request's window start, day and month from one
-- clock reading, so within an account the month and the day never go back
-- as the window start goes forward.
--
-- meter_group stays for the processes of the previous release during a
-- rolling deploy: both functions lock the same rows, so the limits stay
-- exact while both run.
CREATE TYPE meter_group_request AS (
    ord int, key_id bigint, account_id bigint, hash bytea, plan text, revoked bool, expired bool,
    scopes text[], surfaces text[], monthly_credits bigint, allowed bool,
    window_start timestamptz, month date, day date, cost bigint, rate_limit int, data_version bigint);

CREATE FUNCTION meter_group_coalesced(
    p_hashes bytea[], p_window_starts timestamptz[], p_rate_limits int[], p_costs bigint[],
    p_days date[], p_months date[], p_allowed text[], p_surfaces text[], p_writes bool[],
    p_account_surfaces text[], p_data_scope text)
RETURNS TABLE (
    o_ord int, o_key_id bigint, o_account_id bigint, o_hash bytea, o_plan text, o_revoked bool, o_expired bool,
    o_scopes text[], o_surfaces text[], o_monthly_credits bigint, o_window_requests int, o_charged bool,
    o_month_used bigint, o_data_version bigint)
LANGUAGE plpgsql
-- Its statements' plans are cached once per connection: left to choose,
-- the plan cache re-planned the key lookup on every call (planning cost
-- more than the lookup), since its custom plans looked cheaper than the
-- generic one.
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    k record;
    x meter_group_request[] := '{}';
    m int := 0;
    v_requests int;
    cnt int[];
    cand bool[];
    chg bool[];
    used bigint[];
    i int := 1;
    e int;
    j int;
    f int;
    g int;
    h int;
    acct bigint;
    monthly bigint;
    ws timestamptz;
    mon date;
    dy date;
    kid bigint;
    nr int;
    nk int;
    c int;
    total int;
    s bigint;
    v_credits bigint;
    all_in bool;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR k IN
        SELECT q.ord::int AS ord, kk.id, kk.account_id, kk.hash, kk.plan, kk.revoked, kk.expired, kk.scopes, kk.surfaces,
            kk.monthly_credits,
            kk.plan = ANY (string_to_array(p_allowed[q.ord], ','))
                AND (p_surfaces[q.ord] = ANY (p_account_surfaces)
                    OR (p_data_scope = ANY (kk.scopes)
                        AND (kk.surfaces IS NULL OR (p_surfaces[q.ord] = ANY (kk.surfaces) AND NOT p_writes[q.ord]))))
                AS allowed,
            p_window_starts[q.ord] AS window_start, p_months[q.ord] AS month, p_days[q.ord] AS day,
            p_costs[q.ord] AS cost, p_rate_limits[q.ord] AS rate_limit, dv.version AS data_version,
            count(*) OVER (PARTITION BY kk.account_id) AS of_account
        FROM unnest(p_hashes) WITH ORDINALITY AS q (hash, ord)
        -- Each key by its hash index: as a plain join, the generic plan of
        -- an array of unknown length hashed a scan of every key.
        CROSS JOIN LATERAL (
            SELECT ak.id, ak.account_id, ak.hash, a.plan,
                ak.revoked_at IS NOT NULL OR coalesce(ak.expires_at <= now(), false) AS revoked,
                ak.revoked_at IS NULL AND coalesce(ak.expires_at <= now(), false) AS expired,
                ak.scopes, ak.surfaces, pl.monthly_credits
            FROM api_keys ak
            JOIN accounts a ON a.id = ak.account_id
            JOIN plans pl ON pl.name = a.plan
            WHERE ak.hash = q.hash
            OFFSET 0
        ) kk
        CROSS JOIN data_version dv
        ORDER BY kk.account_id, p_window_starts[q.ord], kk.id, q.ord
    LOOP
        IF k.of_account = 1 THEN
            -- The account's only request of the group: its four rows
            -- written for it alone.
            v_requests := 0;
            v_credits := NULL;
            o_charged := false;
            IF NOT k.revoked THEN
                INSERT INTO account_rate_windows AS r (account_id, window_start, requests)
                VALUES (k.account_id, k.window_start, 1)
                ON CONFLICT (account_id, window_start) DO UPDATE SET requests = r.requests + 1
                RETURNING r.requests INTO v_requests;
                INSERT INTO rate_windows AS r (api_key_id, window_start, requests)
                VALUES (k.id, k.window_start, 1)
                ON CONFLICT (api_key_id, window_start) DO UPDATE SET requests = r.requests + 1;
                IF k.allowed AND v_requests <= k.rate_limit AND k.cost <= k.monthly_credits THEN
                    INSERT INTO account_usage_monthly AS u (account_id, month, requests, credits)
                    VALUES (k.account_id, k.month, 1, k.cost)
                    ON CONFLICT (account_id, month) DO UPDATE
                        SET requests = u.requests + 1, credits = u.credits + excluded.credits
                        WHERE excluded.credits = 0 OR u.credits + excluded.credits <= k.monthly_credits
                    RETURNING u.credits INTO v_credits;
                    IF v_credits IS NOT NULL THEN
                        o_charged := true;
                        INSERT INTO usage_daily AS u (api_key_id, day, requests, credits)
                        VALUES (k.id, k.day, 1, k.cost)
                        ON CONFLICT (api_key_id, day) DO UPDATE
                            SET requests = u.requests + 1, credits = u.credits + excluded.credits;
                    END IF;
                END IF;
            END IF;
            IF v_credits IS NULL THEN
                SELECT u.credits INTO v_credits FROM account_usage_monthly u
                WHERE u.account_id = k.account_id AND u.month = k.month;
            END IF;
            o_ord := k.ord;
            o_key_id := k.id;
            o_account_id := k.account_id;
            o_hash := k.hash;
            o_plan := k.plan;
            o_revoked := k.revoked;
            o_expired := k.expired;
            o_scopes := k.scopes;
            o_surfaces := k.surfaces;
            o_monthly_credits := k.monthly_credits;
            o_window_requests := v_requests;
            o_month_used := coalesce(v_credits, 0);
            o_data_version := k.data_version;
            RETURN NEXT;
            CONTINUE;
        END IF;

        -- Several requests of the account: gathered, then metered together
        -- with its last.
        m := m + 1;
        x[m] := ROW(k.ord, k.id, k.account_id, k.hash, k.plan, k.revoked, k.expired, k.scopes, k.surfaces,
            k.monthly_credits, k.allowed, k.window_start, k.month, k.day, k.cost, k.rate_limit,
            k.data_version)::meter_group_request;
        IF m < k.of_account THEN
            CONTINUE;
        END IF;
        i := 1;
        e := m;
        cnt := array_fill(0, ARRAY[m]);
        cand := array_fill(false, ARRAY[m]);
        chg := array_fill(false, ARRAY[m]);
        used := array_fill(0::bigint, ARRAY[m]);
        acct := k.account_id;
        monthly := k.monthly_credits;

        -- Windows: each window row once, then its keys' rows.
        j := i;
        WHILE j <= e LOOP
            ws := (x[j]).window_start;
            f := j;
            nr := 0;
            WHILE f <= e AND (x[f]).window_start = ws LOOP
                IF NOT (x[f]).revoked THEN
                    nr := nr + 1;
                END IF;
                f := f + 1;
            END LOOP;
            IF nr > 0 THEN
                INSERT INTO account_rate_windows AS w (account_id, window_start, requests)
                VALUES (acct, ws, nr)
                ON CONFLICT (account_id, window_start) DO UPDATE SET requests = w.requests + excluded.requests
                RETURNING w.requests INTO total;
                c := total - nr;
                g := j;
                WHILE g < f LOOP
                    kid := (x[g]).key_id;
                    h := g;
                    nk := 0;
                    WHILE h < f AND (x[h]).key_id = kid LOOP
                        IF NOT (x[h]).revoked THEN
                            c := c + 1;
                            cnt[h] := c;
                            nk := nk + 1;
                        END IF;
                        h := h + 1;
                    END LOOP;
                    IF nk > 0 THEN
                        INSERT INTO rate_windows AS w (api_key_id, window_start, requests)
                        VALUES (kid, ws, nk)
                        ON CONFLICT (api_key_id, window_start) DO UPDATE SET requests = w.requests + excluded.requests;
                    END IF;
                    g := h;
                END LOOP;
            END IF;
            j := f;
        END LOOP;

        -- Months: each month row charged once.
        j := i;
        WHILE j <= e LOOP
            mon := (x[j]).month;
            f := j;
            nk := 0;
            s := 0;
            WHILE f <= e AND (x[f]).month = mon LOOP
                cand[f] := NOT (x[f]).revoked AND (x[f]).allowed AND cnt[f] <= (x[f]).rate_limit
                    AND (x[f]).cost <= monthly;
                IF cand[f] THEN
                    nk := nk + 1;
                    s := s + (x[f]).cost;
                END IF;
                f := f + 1;
            END LOOP;
            all_in := false;
            IF nk > 0 THEN
                UPDATE account_usage_monthly AS u SET requests = u.requests + nk, credits = u.credits + s
                WHERE u.account_id = acct AND u.month = mon AND (s = 0 OR u.credits + s <= monthly)
                RETURNING u.credits - s INTO v_credits;
                all_in := FOUND;
                IF NOT all_in THEN
                    SELECT u.credits INTO v_credits FROM account_usage_monthly u
                    WHERE u.account_id = acct AND u.month = mon FOR UPDATE;
                    IF NOT FOUND THEN
                        INSERT INTO account_usage_monthly (account_id, month, requests, credits)
                        VALUES (acct, mon, 0, 0) ON CONFLICT (account_id, month) DO NOTHING;
                        SELECT u.credits INTO v_credits FROM account_usage_monthly u
                        WHERE u.account_id = acct AND u.month = mon FOR UPDATE;
                    END IF;
                END IF;
            ELSE
                SELECT u.credits INTO v_credits FROM account_usage_monthly u
                WHERE u.account_id = acct AND u.month = mon;
                v_credits := coalesce(v_credits, 0);
            END IF;
            nk := 0;
            s := 0;
            FOR g IN j .. f - 1 LOOP
                IF cand[g] AND (all_in OR (x[g]).cost = 0 OR v_credits + (x[g]).cost <= monthly) THEN
                    chg[g] := true;
                    v_credits := v_credits + (x[g]).cost;
                    nk := nk + 1;
                    s := s + (x[g]).cost;
                END IF;
                used[g] := v_credits;
            END LOOP;
            IF NOT all_in AND nk > 0 THEN
                UPDATE account_usage_monthly AS u SET requests = u.requests + nk, credits = u.credits + s
                WHERE u.account_id = acct AND u.month = mon;
            END IF;
            j := f;
        END LOOP;

        -- Days: each key's day row once for its charged requests.
        g := i;
        WHILE g <= e LOOP
            IF NOT chg[g] THEN
                g := g + 1;
                CONTINUE;
            END IF;
            kid := (x[g]).key_id;
            dy := (x[g]).day;
            h := g;
            nk := 0;
            s := 0;
            WHILE h <= e AND (NOT chg[h] OR ((x[h]).key_id = kid AND (x[h]).day = dy)) LOOP
                IF chg[h] THEN
                    nk := nk + 1;
                    s := s + (x[h]).cost;
                END IF;
                h := h + 1;
            END LOOP;
            INSERT INTO usage_daily AS u (api_key_id, day, requests, credits)
            VALUES (kid, dy, nk, s)
            ON CONFLICT (api_key_id, day) DO UPDATE
                SET requests = u.requests + excluded.requests, credits = u.credits + excluded.credits;
            g := h;
        END LOOP;

        FOR g IN i .. e LOOP
            o_ord := (x[g]).ord;
            o_key_id := (x[g]).key_id;
            o_account_id := acct;
            o_hash := (x[g]).hash;
            o_plan := (x[g]).plan;
            o_revoked := (x[g]).revoked;
            o_expired := (x[g]).expired;
            o_scopes := (x[g]).scopes;
            o_surfaces := (x[g]).surfaces;
            o_monthly_credits := monthly;
            o_window_requests := cnt[g];
            o_charged := chg[g];
            o_month_used := used[g];
            o_data_version := (x[g]).data_version;
            RETURN NEXT;
        END LOOP;
        m := 0;
        x := '{}';
    END LOOP;
END
$$;
