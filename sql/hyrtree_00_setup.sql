--
-- hyrtree_00_setup: helper functions used by the other hyrtree_* tests.
-- Runs first (pg_regress runs the tests in name order). To run one test
-- alone: make installcheck REGRESS="hyrtree_00_setup hyrtree_basic"
--
-- The helpers implement the differential principle: a query is run with a
-- forced sequential scan, a forced index scan and a forced bitmap scan, the
-- plans are checked to really use the intended path, and the sorted id
-- lists (duplicates kept) are compared. Output is only counts and booleans.
--
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS hit CASCADE;
CREATE SCHEMA hit;

-- Force one access path: 'seq', 'index', 'bitmap' or 'default'
CREATE FUNCTION hit.use_path(path text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF path NOT IN ('seq', 'index', 'bitmap', 'default') THEN
    RAISE EXCEPTION 'unknown access path %', path;
  END IF;
  PERFORM set_config('enable_seqscan',
    CASE WHEN path IN ('seq', 'default') THEN 'on' ELSE 'off' END, false);
  PERFORM set_config('enable_indexscan',
    CASE WHEN path IN ('index', 'default') THEN 'on' ELSE 'off' END, false);
  PERFORM set_config('enable_indexonlyscan',
    CASE WHEN path = 'default' THEN 'on' ELSE 'off' END, false);
  PERFORM set_config('enable_bitmapscan',
    CASE WHEN path IN ('bitmap', 'default') THEN 'on' ELSE 'off' END, false);
END $$;

-- EXPLAIN (COSTS OFF) text of q under an access path
CREATE FUNCTION hit.plan(q text, path text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  l text;
  r text := '';
BEGIN
  PERFORM hit.use_path(path);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    r := r || l || E'\n';
  END LOOP;
  PERFORM hit.use_path('default');
  RETURN r;
END $$;

-- Does q, run under path, really use that path (and index idx)?
CREATE FUNCTION hit.uses(q text, path text, idx text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  p text := hit.plan(q, path);
BEGIN
  RETURN CASE path
    WHEN 'index' THEN position('Index Scan using ' || idx || ' ' IN p) > 0
                      AND position('Bitmap' IN p) = 0
    WHEN 'bitmap' THEN position('Bitmap Index Scan on ' || idx || E'\n' IN p) > 0
    WHEN 'seq' THEN position('Seq Scan on' IN p) > 0 AND position('Index' IN p) = 0
  END;
END $$;

-- Sorted ids (duplicates kept) of the rows q returns under an access path.
-- q must return a column named id.
CREATE FUNCTION hit.ids(q text, path text) RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
  r bigint[];
BEGIN
  PERFORM hit.use_path(path);
  EXECUTE format('SELECT coalesce(array_agg(id::bigint ORDER BY id), ''{}'') FROM (%s) hit_q', q)
    INTO r;
  PERFORM hit.use_path('default');
  RETURN r;
END $$;

-- Differential check of a filter query: seq scan vs index scan vs bitmap
-- scan on index idx. n = rows the sequential scan returns.
CREATE FUNCTION hit.diff(q text, idx text,
                         OUT n int, OUT seq_plan boolean,
                         OUT index_same boolean, OUT index_plan boolean,
                         OUT bitmap_same boolean, OUT bitmap_plan boolean)
LANGUAGE plpgsql AS $$
DECLARE
  s bigint[] := hit.ids(q, 'seq');
BEGIN
  n := cardinality(s);
  seq_plan := hit.uses(q, 'seq', idx);
  index_same := hit.ids(q, 'index') = s;
  index_plan := hit.uses(q, 'index', idx);
  bitmap_same := hit.ids(q, 'bitmap') = s;
  bitmap_plan := hit.uses(q, 'bitmap', idx);
END $$;

-- The kNN query: k nearest rows of tbl (columns id, geom) to g, optionally
-- filtered; k NULL = all rows.
CREATE FUNCTION hit.knn_sql(tbl text, g geometry, k int, filter text DEFAULT 'true')
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format('SELECT id, geom <-> %L::geometry AS d FROM %s WHERE %s ORDER BY geom <-> %L::geometry LIMIT %s',
                g, tbl, filter, g, coalesce(k::text, 'ALL'))
$$;

-- ids and distances, in result order, of a kNN query under an access path
CREATE FUNCTION hit.knn(tbl text, g geometry, k int, path text, filter text DEFAULT 'true',
                        OUT ids bigint[], OUT dists float8[])
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM hit.use_path(path);
  EXECUTE format('SELECT coalesce(array_agg(id ORDER BY ord), ''{}''), '
                 '       coalesce(array_agg(d ORDER BY ord), ''{}'') '
                 'FROM (SELECT id::bigint AS id, d, row_number() OVER () AS ord FROM (%s) q1) q2',
                 hit.knn_sql(tbl, g, k, filter))
    INTO ids, dists;
  PERFORM hit.use_path('default');
END $$;

-- Differential check of a kNN query: sorted seq scan vs ordered index scan.
--   dist_same: the distance sequences are identical (so the order is exact)
--   ids_same:  same ids as a set, no duplicates; rows tied at the boundary
--              distance of a LIMIT may legitimately differ and are excluded
--   index_plan: the index scan really orders by the index (Order By)
CREATE FUNCTION hit.knn_diff(tbl text, idx text, g geometry, k int, filter text DEFAULT 'true',
                             OUT n int, OUT dist_same boolean, OUT ids_same boolean,
                             OUT index_plan boolean, OUT seq_plan boolean)
LANGUAGE plpgsql AS $$
DECLARE
  s record;
  i record;
  bound float8;
  q text := hit.knn_sql(tbl, g, k, filter);
  p text;
  complete boolean;
BEGIN
  SELECT * INTO s FROM hit.knn(tbl, g, k, 'seq', filter);
  SELECT * INTO i FROM hit.knn(tbl, g, k, 'index', filter);
  n := cardinality(s.ids);
  dist_same := s.dists IS NOT DISTINCT FROM i.dists;
  complete := k IS NULL OR n < k;
  bound := CASE WHEN n > 0 THEN s.dists[n] END;
  ids_same := cardinality(i.ids) = n
    AND (SELECT count(DISTINCT x) FROM unnest(i.ids) x) = n
    AND (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(s.ids, s.dists) u(x, d)
          WHERE complete OR d IS DISTINCT FROM bound)
        = (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(i.ids, i.dists) u(x, d)
          WHERE complete OR d IS DISTINCT FROM bound);
  p := hit.plan(q, 'index');
  index_plan := position('Index Scan using ' || idx || ' ' IN p) > 0
                AND position('Order By: (geom <->' IN p) > 0;
  p := hit.plan(q, 'seq');
  seq_plan := position('Seq Scan on' IN p) > 0 AND position('Index' IN p) = 0;
END $$;

-- Is path a file in the database directory of tablespace spc (NULL or
-- pg_default: $PGDATA/base/<dboid>/, else pg_tblspc/<spcoid>/PG_<major>_*/<dboid>/)?
CREATE FUNCTION hit.file_dir_ok(path text, spc name) RETURNS boolean
LANGUAGE sql AS $$
  SELECT path ~ (
    CASE WHEN spc IS NULL OR spc = 'pg_default'
      THEN '^/.*/base/' || d.oid
      ELSE '^/.*/pg_tblspc/' || (SELECT oid FROM pg_tablespace WHERE spcname = spc) || '/PG_' || (current_setting('server_version_num')::int / 10000) || '_[0-9]+/' || d.oid
    END || '/[^/]+$')
  FROM pg_database d WHERE d.datname = current_database()
$$;

-- Is the file named hyb_<flash tablespace oid>_<relfilenode>.<suffix>?
CREATE FUNCTION hit.file_name_ok(path text, idx regclass) RETURNS boolean
LANGUAGE sql AS $$
  SELECT path ~ ('/hyb_' ||
                 (SELECT CASE WHEN c.reltablespace = 0 THEN d.dattablespace ELSE c.reltablespace END
                  FROM pg_class c, pg_database d
                  WHERE c.oid = idx AND d.datname = current_database()) ||
                 '_' || pg_relation_filenode(idx) || '\.[A-Za-z0-9_]+$')
$$;

RESET client_min_messages;
SELECT count(*) AS helper_functions FROM pg_proc WHERE pronamespace = 'hit'::regnamespace;
