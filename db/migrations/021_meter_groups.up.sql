-- Metering in groups: meter_group meters a group of requests in one
-- statement (a group commit, db/meter_group.go). Each request is metered
-- exactly as the single metering statement did it, in order: the key found
-- by hash, the request counted in its account's and its key's rate windows
-- and, when the plan includes the route ($allowed, comma-joined plan
-- names), the key's scopes admit it, the window is within its limit and the
-- month's credits cover its cost, its request and credits added to the
-- account's month and the key's day.
--
-- Row locks: the requests are metered in account order (then in arrival
-- order), and each request locks account window, key window, account month,
-- key day in that order, so two groups (of this process or another) take
-- every account's rows in one order and cannot deadlock; concurrent upserts
-- of one account's window row serialize, so the limits stay exact across
-- server processes.
--
-- The transaction commits asynchronously (synchronous_commit off, local to
-- it), as the single statement did.
CREATE FUNCTION meter_group(
    p_hashes bytea[], p_window_starts timestamptz[], p_rate_limits int[], p_costs bigint[],
    p_days date[], p_months date[], p_allowed text[], p_surfaces text[], p_writes bool[],
    p_account_surfaces text[], p_data_scope text)
RETURNS TABLE (
    o_ord int, o_key_id bigint, o_account_id bigint, o_hash bytea, o_plan text, o_revoked bool, o_expired bool,
    o_scopes text[], o_surfaces text[], o_monthly_credits bigint, o_window_requests int, o_charged bool,
    o_month_used bigint, o_data_version bigint)
LANGUAGE plpgsql AS $$
DECLARE
    k record;
    v_requests int;
    v_credits bigint;
    v_version bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT version INTO v_version FROM data_version;
    FOR k IN
        SELECT i.ord::int AS ord, ak.id, ak.account_id, ak.hash, a.plan,
            (ak.revoked_at IS NOT NULL OR coalesce(ak.expires_at <= now(), false)) AS revoked,
            (ak.revoked_at IS NULL AND coalesce(ak.expires_at <= now(), false)) AS expired,
            ak.scopes, ak.surfaces, pl.monthly_credits,
            a.plan = ANY (string_to_array(p_allowed[i.ord], ','))
                AND (p_surfaces[i.ord] = ANY (p_account_surfaces)
                    OR (p_data_scope = ANY (ak.scopes)
                        AND (ak.surfaces IS NULL OR (p_surfaces[i.ord] = ANY (ak.surfaces) AND NOT p_writes[i.ord]))))
                AS allowed
        FROM unnest(p_hashes) WITH ORDINALITY AS i (hash, ord)
        JOIN api_keys ak ON ak.hash = i.hash
        JOIN accounts a ON a.id = ak.account_id
        JOIN plans pl ON pl.name = a.plan
        ORDER BY ak.account_id, i.ord
    LOOP
        v_requests := 0;
        v_credits := NULL;
        o_charged := false;
        IF NOT k.revoked THEN
            INSERT INTO account_rate_windows AS r (account_id, window_start, requests)
            VALUES (k.account_id, p_window_starts[k.ord], 1)
            ON CONFLICT (account_id, window_start) DO UPDATE SET requests = r.requests + 1
            RETURNING r.requests INTO v_requests;
            INSERT INTO rate_windows AS r (api_key_id, window_start, requests)
            VALUES (k.id, p_window_starts[k.ord], 1)
            ON CONFLICT (api_key_id, window_start) DO UPDATE SET requests = r.requests + 1;
            IF k.allowed AND v_requests <= p_rate_limits[k.ord] AND p_costs[k.ord] <= k.monthly_credits THEN
                INSERT INTO account_usage_monthly AS m (account_id, month, requests, credits)
                VALUES (k.account_id, p_months[k.ord], 1, p_costs[k.ord])
                ON CONFLICT (account_id, month) DO UPDATE
                    SET requests = m.requests + 1, credits = m.credits + excluded.credits
                    WHERE excluded.credits = 0 OR m.credits + excluded.credits <= k.monthly_credits
                RETURNING m.credits INTO v_credits;
                IF v_credits IS NOT NULL THEN
                    o_charged := true;
                    INSERT INTO usage_daily AS u (api_key_id, day, requests, credits)
                    VALUES (k.id, p_days[k.ord], 1, p_costs[k.ord])
                    ON CONFLICT (api_key_id, day) DO UPDATE
                        SET requests = u.requests + 1, credits = u.credits + excluded.credits;
                END IF;
            END IF;
        END IF;
        IF v_credits IS NULL THEN
            SELECT m.credits INTO v_credits FROM account_usage_monthly m
            WHERE m.account_id = k.account_id AND m.month = p_months[k.ord];
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
        o_data_version := v_version;
        RETURN NEXT;
    END LOOP;
END
$$;
