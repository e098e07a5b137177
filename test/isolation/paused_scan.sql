  -- paused_scan(q, k): runs q (columns id, d: d the ordering distance, or
  -- a constant), and after its k-th row waits for advisory lock 1, which
  -- another session holds while it changes the table: the scan resumes on
  -- an index that was split, flushed, vacuumed or checkpointed under it.
  -- Then q runs again as a sequential scan in the same snapshot. Returns
  -- the rows, the distinct ids, whether the ids equal the sequential
  -- scan's and the distances its sorted ones (same_as_seq), whether the
  -- distances never decrease (ordered), and whether q used the index.
  CREATE FUNCTION paused_scan(q text, k int, OUT n int, OUT distinct_ids int,
                              OUT same_as_seq boolean, OUT ordered boolean, OUT index_used boolean)
  LANGUAGE plpgsql AS $f$
  DECLARE
    c refcursor;
    r record;
    ids bigint[] := ARRAY[]::bigint[];
    ds float8[] := ARRAY[]::float8[];
    seq_ids bigint[];
    seq_ds float8[];
    plan text := '';
    l text;
  BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      plan := plan || l || E'\n';
    END LOOP;
    index_used := position('Index Scan using t_idx' IN plan) > 0;
    n := 0;
    ordered := true;
    OPEN c FOR EXECUTE q;
    LOOP
      FETCH c INTO r;
      EXIT WHEN NOT FOUND;
      n := n + 1;
      IF n > 1 AND (ds[n - 1] IS NULL AND r.d IS NOT NULL OR ds[n - 1] > r.d) THEN
        ordered := false;
      END IF;
      ids := ids || r.id::bigint;
      ds := ds || r.d::float8;
      IF n = k THEN
        PERFORM pg_advisory_lock(1);
        PERFORM pg_advisory_unlock(1);
      END IF;
    END LOOP;
    CLOSE c;
    distinct_ids := (SELECT count(DISTINCT x) FROM unnest(ids) x);
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    EXECUTE format('SELECT array_agg(id::bigint ORDER BY id), array_agg(d::float8 ORDER BY d NULLS LAST) FROM (%s) s', q)
      INTO seq_ids, seq_ds;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    same_as_seq := coalesce(seq_ids, ARRAY[]::bigint[]) = (SELECT coalesce(array_agg(x ORDER BY x), ARRAY[]::bigint[]) FROM unnest(ids) x)
      AND coalesce(seq_ds, ARRAY[]::float8[]) IS NOT DISTINCT FROM ds;
  END $f$;
