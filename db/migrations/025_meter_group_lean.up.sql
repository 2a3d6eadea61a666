-- Metering writes three counter rows a request where it wrote four. Of a
-- request's four rows (account window, key window, account month, key
-- day), the key's window row was a limit for nothing: it was the record of
-- the key's last use (/v1/keys' lastUsedAt, the latest window_start) and of
-- the requests the key made. A charged request writes its key's day row
-- anyway, so that row now carries the key's latest window of the day
-- (usage_daily.last_window), and the key's window row is written only for
-- the requests that are not charged (refused for the plan, the scopes, the
-- window or the credits; rare), which have no day row write to carry it.
-- So a key's requests counted in its windows are its rate_windows requests
-- plus its usage_daily requests (charged) once this function meters them,
-- and its last use is the later of its latest rate window and its latest
-- day row's last_window (db/keys.go reads both, so the processes of the
-- previous release, still writing every request's key window during a
-- rolling deploy, are read right too).
--
-- And a group of one request (nearly every group of a service whose
-- clients each use their own key: a group grows only while another group's
-- statement is in flight) looks its key up by a plain three-row join on the
-- key's hash, not by unnesting the hashes, probing each and counting and
-- sorting them by account, which cost about a third of a lone request's
-- metering.
--
-- meter_group_lean is meter_group_coalesced (migration 022) with those two
-- changes: same arguments, same rows returned, same decisions, same lock
-- order (a key's window row is still only locked under its account's
-- window row, now after the account's month and its keys' day rows, which
-- no one else can hold it against: every writer of a key's window row holds
-- its account's window row first). meter_group_coalesced stays for the
-- processes of the previous release.
ALTER TABLE usage_daily ADD COLUMN last_window timestamptz;

CREATE FUNCTION meter_group_lean(
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
    lw timestamptz;
    key_rows refcursor;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    -- A group of one request (the usual group of a service whose clients
    -- each use their own key) looks its key up with one probe of three
    -- rows; a larger one unnests its hashes, probes each and sorts them.
    IF cardinality(p_hashes) = 1 THEN
        OPEN key_rows FOR
        SELECT 1 AS ord, ak.id, ak.account_id, ak.hash, a.plan,
            ak.revoked_at IS NOT NULL OR coalesce(ak.expires_at <= now(), false) AS revoked,
            ak.revoked_at IS NULL AND coalesce(ak.expires_at <= now(), false) AS expired,
            ak.scopes, ak.surfaces, pl.monthly_credits,
            a.plan = ANY (string_to_array(p_allowed[1], ','))
                AND (p_surfaces[1] = ANY (p_account_surfaces)
                    OR (p_data_scope = ANY (ak.scopes)
                        AND (ak.surfaces IS NULL OR (p_surfaces[1] = ANY (ak.surfaces) AND NOT p_writes[1]))))
                AS allowed,
            p_window_starts[1] AS window_start, p_months[1] AS month, p_days[1] AS day,
            p_costs[1] AS cost, p_rate_limits[1] AS rate_limit, dv.version AS data_version,
            1::bigint AS of_account
        FROM api_keys ak
        JOIN accounts a ON a.id = ak.account_id
        JOIN plans pl ON pl.name = a.plan
        CROSS JOIN data_version dv
        WHERE ak.hash = p_hashes[1];
    ELSE
        OPEN key_rows FOR
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
        ORDER BY kk.account_id, p_window_starts[q.ord], kk.id, q.ord;
    END IF;
    LOOP
        FETCH key_rows INTO k;
        EXIT WHEN NOT FOUND;
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
                IF k.allowed AND v_requests <= k.rate_limit AND k.cost <= k.monthly_credits THEN
                    INSERT INTO account_usage_monthly AS u (account_id, month, requests, credits)
                    VALUES (k.account_id, k.month, 1, k.cost)
                    ON CONFLICT (account_id, month) DO UPDATE
                        SET requests = u.requests + 1, credits = u.credits + excluded.credits
                        WHERE excluded.credits = 0 OR u.credits + excluded.credits <= k.monthly_credits
                    RETURNING u.credits INTO v_credits;
                    IF v_credits IS NOT NULL THEN
                        o_charged := true;
                        INSERT INTO usage_daily AS u (api_key_id, day, requests, credits, last_window)
                        VALUES (k.id, k.day, 1, k.cost, k.window_start)
                        ON CONFLICT (api_key_id, day) DO UPDATE
                            SET requests = u.requests + 1, credits = u.credits + excluded.credits,
                                last_window = greatest(u.last_window, excluded.last_window);
                    END IF;
                END IF;
                -- Not charged: counted in the key's window row instead.
                IF NOT o_charged THEN
                    INSERT INTO rate_windows AS r (api_key_id, window_start, requests)
                    VALUES (k.id, k.window_start, 1)
                    ON CONFLICT (api_key_id, window_start) DO UPDATE SET requests = r.requests + 1;
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

        -- Windows: each window row once (the keys' window rows, for the
        -- requests not charged, are written last).
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
                        END IF;
                        h := h + 1;
                    END LOOP;
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
            lw := NULL;
            WHILE h <= e AND (NOT chg[h] OR ((x[h]).key_id = kid AND (x[h]).day = dy)) LOOP
                IF chg[h] THEN
                    nk := nk + 1;
                    s := s + (x[h]).cost;
                    lw := greatest(lw, (x[h]).window_start);
                END IF;
                h := h + 1;
            END LOOP;
            INSERT INTO usage_daily AS u (api_key_id, day, requests, credits, last_window)
            VALUES (kid, dy, nk, s, lw)
            ON CONFLICT (api_key_id, day) DO UPDATE
                SET requests = u.requests + excluded.requests, credits = u.credits + excluded.credits,
                    last_window = greatest(u.last_window, excluded.last_window);
            g := h;
        END LOOP;

        -- Keys' windows: each key's window row once for its requests the
        -- window counted and that were not charged.
        g := i;
        WHILE g <= e LOOP
            IF (x[g]).revoked OR chg[g] THEN
                g := g + 1;
                CONTINUE;
            END IF;
            kid := (x[g]).key_id;
            ws := (x[g]).window_start;
            h := g;
            nk := 0;
            WHILE h <= e AND ((x[h]).revoked OR chg[h] OR ((x[h]).key_id = kid AND (x[h]).window_start = ws)) LOOP
                IF NOT (x[h]).revoked AND NOT chg[h] THEN
                    nk := nk + 1;
                END IF;
                h := h + 1;
            END LOOP;
            INSERT INTO rate_windows AS w (api_key_id, window_start, requests)
            VALUES (kid, ws, nk)
            ON CONFLICT (api_key_id, window_start) DO UPDATE SET requests = w.requests + excluded.requests;
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
    CLOSE key_rows;
END
$$;
