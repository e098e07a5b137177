--
-- efind_00_setup: the efind_* tests run before hyrtree_00_setup (name
-- order), so load its differential helpers (schema hit) here, and add
-- efind helpers. pg_regress runs psql in the source directory.
--
\set ECHO none
\o /dev/null
\i sql/hyrtree_00_setup.sql
\o
\set ECHO all
SELECT to_regproc('hit.diff') IS NOT NULL AND to_regproc('hit.knn_diff') IS NOT NULL AS hit_helpers;

SET client_min_messages = warning;
-- the "efind" object of hybrid_index_inspect
CREATE FUNCTION hit.ef(idx regclass) RETURNS jsonb
LANGUAGE sql AS $$ SELECT hybrid_index_inspect(idx)->'efind' $$;

-- Is the last flush's degree d its flushing policy's formula, recomputed
-- from the unit it reports (Eq. 4-7), and no smaller than any other
-- unit's?  NULL if nothing was flushed or the unit has more pages than
-- the 16 inspect shows.  FP_m and FP_mh are positive
-- (every buffered page has a modification); the area weights of FP_mha
-- and FP_mhao can make a degree 0.
CREATE FUNCTION hit.ef_degree_ok(idx regclass) RETURNS boolean
LANGUAGE sql AS $$
  WITH l AS (SELECT hit.ef(idx)->'flushes'->'last' AS j),
  u AS (SELECT sum((p->>'mod_count')::float8) AS m,
               sum((p->>'mod_count')::float8 * ((p->>'h')::float8 + 1)) AS mh,
               sum((p->>'modified_area')::float8) AS ma,
               sum((p->>'overlap_area')::float8) AS oa
        FROM l, jsonb_array_elements(l.j->'unit') p),
  w AS (SELECT u.*, (l.j->>'degree')::float8 AS d, l.j->>'policy' AS policy,
               (l.j->>'runner_up')::float8 AS runner_up,
               (l.j->>'alpha')::float8 AS alpha, (l.j->>'beta')::float8 AS beta,
               (l.j->>'total_modified_area')::float8 AS tma,
               (l.j->>'total_overlap_area')::float8 AS toa
        FROM u, l WHERE l.j IS NOT NULL AND jsonb_typeof(l.j) = 'object'
          AND (l.j->>'pages')::int = jsonb_array_length(l.j->'unit'))
  SELECT CASE WHEN policy IN ('m', 'mh') THEN d > 0 ELSE d >= 0 END
     AND (runner_up IS NULL OR d >= runner_up)
     AND abs(alpha - CASE WHEN tma > 0 THEN ma / tma ELSE 1 END) <= 1e-9 * greatest(1, alpha)
     AND abs(beta - CASE WHEN toa > 0 THEN oa / toa ELSE 1 END) <= 1e-9 * greatest(1, beta)
     AND abs(d - CASE policy WHEN 'm' THEN m
                             WHEN 'mh' THEN mh
                             WHEN 'mha' THEN mh * alpha
                             WHEN 'mhao' THEN mh * alpha * beta END) <= 1e-9 * greatest(1, d)
  FROM w
$$;

-- Filters (&&, ~=, ~, @ against windows of tbl.qid/g) and kNN agree with a
-- sequential scan on index idx of table tbl (columns id, geom).
CREATE FUNCTION hit.ef_diff_all(tbl text, idx text, windows text, knn_k int DEFAULT 20,
                                OUT filters_ok boolean, OUT knn_ok boolean, OUT rows_seen bigint)
LANGUAGE plpgsql AS $$
DECLARE
  w record;
  op text;
  d record;
BEGIN
  filters_ok := true;
  knn_ok := true;
  rows_seen := 0;
  FOR w IN EXECUTE format('SELECT qid, g FROM %s ORDER BY qid', windows) LOOP
    FOREACH op IN ARRAY ARRAY['&&', '~', '@'] LOOP
      SELECT * INTO d FROM hit.diff(format('SELECT id FROM %s WHERE geom %s %L::geometry', tbl, op, w.g), idx);
      filters_ok := filters_ok AND d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan;
      rows_seen := rows_seen + d.n;
    END LOOP;
    SELECT * INTO d FROM hit.knn_diff(tbl, idx, ST_Centroid(w.g), knn_k);
    knn_ok := knn_ok AND d.dist_same AND d.ids_same AND d.index_plan;
  END LOOP;
  -- ~= with the exact box of stored rows
  FOR w IN EXECUTE format('SELECT geom AS g FROM %s WHERE geom IS NOT NULL ORDER BY id LIMIT 10', tbl) LOOP
    SELECT * INTO d FROM hit.diff(format('SELECT id FROM %s WHERE geom ~= %L::geometry', tbl, w.g), idx);
    filters_ok := filters_ok AND d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan AND d.n > 0;
  END LOOP;
END $$;
RESET client_min_messages;
