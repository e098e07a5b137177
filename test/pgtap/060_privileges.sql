-- 060_privileges.sql — what a role may do with the functions of hybrid_index
-- and hybrid_index_bench on another role's table and index (issue 20):
--   content      read index entries (what the table holds): SELECT on the
--                table (of a partitioned index: the partitioned table), or
--                pg_read_all_data, or superuser; else 42501 naming the table
--   maintenance  change an index's state: owning the index (or superuser);
--                else 42501 "must be owner of index"
--   summary      counters and structure summaries: anyone (as
--                pg_stat_all_indexes and pg_relation_filepath)
--   value        no relation involved: anyone
--   handler      index_am_handler: not callable from SQL
--   superuser    reads another cluster's files (hybrid_index_upgrade_files):
--                superusers only (EXECUTE revoked from PUBLIC, and checked)
--   bench        the benchmark's SQL functions: caller's rights (no SECURITY
--                DEFINER, no SET clauses); its schema is not usable by
--                PUBLIC, so a role without privileges is refused
-- The listing `fn` must name every function of both extensions (from
-- pg_proc via pg_depend): a new function without a line fails this file.
-- GUCs: only hybrid_index.recheck and hybrid_index.postgis_functions (they
-- concern the session's own queries) may be set by any user.
-- Runs in one transaction that is rolled back (roles included).
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS hybrid_index_bench;

SELECT plan(200);

\o /dev/null
-- what a role gets from a statement: 'ok' or 'SQLSTATE: message'
CREATE FUNCTION pg_temp.as_role(p_role name, p_sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	res text;
BEGIN
	EXECUTE format('SET LOCAL ROLE %I', p_role);
	BEGIN
		EXECUTE p_sql;
		res := 'ok';
	EXCEPTION WHEN OTHERS THEN
		res := SQLSTATE || ': ' || SQLERRM;
	END;
	RESET ROLE;
	RETURN res;
END $$;

CREATE ROLE hi_t060_owner;
CREATE ROLE hi_t060_other;
CREATE ROLE hi_t060_reader;
GRANT pg_read_all_data TO hi_t060_reader;
CREATE SCHEMA t060 AUTHORIZATION hi_t060_owner;
GRANT USAGE ON SCHEMA t060 TO hi_t060_other, hi_t060_reader;

SET ROLE hi_t060_owner;
CREATE TABLE t060.secret (id bigint, geom geometry);
INSERT INTO t060.secret SELECT i, ST_MakePoint(i % 100, i / 100) FROM generate_series(0, 9999) i;
CREATE INDEX secret_idx ON t060.secret USING hyrtree (geom);
REVOKE ALL ON t060.secret FROM PUBLIC;
CREATE TABLE t060.parted (id bigint, geom geometry) PARTITION BY RANGE (id);
CREATE TABLE t060.parted_1 PARTITION OF t060.parted FOR VALUES FROM (0) TO (100000);
INSERT INTO t060.parted SELECT i, ST_MakePoint(i % 10, i / 10) FROM generate_series(0, 999) i;
CREATE INDEX parted_idx ON t060.parted USING hyrtree (geom);
RESET ROLE;

-- One line per function of both extensions; call: the statement, %L = the index
CREATE TEMP TABLE fn (sig text PRIMARY KEY, kind text NOT NULL, call text);
INSERT INTO fn VALUES
	('hyrtree_handler(internal)', 'handler', NULL),
	('efind_handler(internal)', 'handler', NULL),
	('lbgrid_handler(internal)', 'handler', NULL),
	('hgrid_handler(internal)', 'handler', NULL),
	('hybrid_index_stats(regclass)', 'summary', 'SELECT * FROM hybrid_index_stats(%L)'),
	('hybrid_index_inspect(regclass)', 'summary', 'SELECT hybrid_index_inspect(%L)'),
	('hybrid_index_files(regclass)', 'summary', 'SELECT * FROM hybrid_index_files(%L)'),
	('hybrid_index_reset_stats(regclass)', 'maintenance', 'SELECT hybrid_index_reset_stats(%L)'),
	('hybrid_index_checkpoint(regclass)', 'maintenance', 'SELECT hybrid_index_checkpoint(%L)'),
	('hybrid_index_check(regclass,boolean)', 'content', 'SELECT hybrid_index_check(%L)'),
	('hybrid_index_pages(regclass)', 'content', 'SELECT * FROM hybrid_index_pages(%L)'),
	('hybrid_index_probe(regclass,geometry,text)', 'content',
	 'SELECT hybrid_index_probe(%L, ST_MakeEnvelope(0, 0, 9.5, 9.5), ''&&'')'),
	('hybrid_index_probe_knn(regclass,geometry,integer)', 'content',
	 'SELECT hybrid_index_probe_knn(%L, ST_MakePoint(5, 5), 3)'),
	('hybrid_index_key_box(geometry)', 'value', 'SELECT hybrid_index_key_box(''POINT(1 2)'')'),
	('hybrid_index_version()', 'value', 'SELECT hybrid_index_version()'),
	('hybrid_index_upgrade_files(text,boolean)', 'superuser', 'SELECT hybrid_index_upgrade_files(''/nonexistent'')'),
	('hi_intersects(geometry,geometry)', 'value', 'SELECT hi_intersects(''POINT(1 2)'', ''POINT(1 2)'')'),
	('hi_dwithin(geometry,geometry,double precision)', 'value',
	 'SELECT hi_dwithin(''POINT(1 2)'', ''POINT(1 3)'', 2)'),
	('hi_contains(geometry,geometry)', 'value', 'SELECT hi_contains(''POINT(1 2)'', ''POINT(1 2)'')'),
	('hi_within(geometry,geometry)', 'value', 'SELECT hi_within(''POINT(1 2)'', ''POINT(1 2)'')'),
	-- the benchmark's declarations of the same C functions
	('hybrid_index_bench._stats(regclass)', 'summary', 'SELECT * FROM hybrid_index_bench._stats(%L)'),
	('hybrid_index_bench._inspect(regclass)', 'summary', 'SELECT hybrid_index_bench._inspect(%L)'),
	('hybrid_index_bench._files(regclass)', 'summary', 'SELECT * FROM hybrid_index_bench._files(%L)'),
	('hybrid_index_bench._checkpoint(regclass)', 'maintenance', 'SELECT hybrid_index_bench._checkpoint(%L)'),
	('hybrid_index_bench._probe(regclass,geometry,text)', 'content',
	 'SELECT hybrid_index_bench._probe(%L, ST_MakeEnvelope(0, 0, 9.5, 9.5), ''&&'')'),
	('hybrid_index_bench._probe_knn(regclass,geometry,integer)', 'content',
	 'SELECT hybrid_index_bench._probe_knn(%L, ST_MakePoint(5, 5), 3)'),
	-- the benchmark's SQL functions and procedures
	('hybrid_index_bench._seed(bigint)', 'bench', NULL),
	('hybrid_index_bench._data_schema()', 'bench', NULL),
	('hybrid_index_bench._drop_table(text)', 'bench', NULL),
	('hybrid_index_bench._table_name(text,text[])', 'bench', NULL),
	('hybrid_index_bench.is_hybrid_am(name)', 'bench', NULL),
	('hybrid_index_bench._proc_sample()', 'bench', NULL),
	('hybrid_index_bench.extension_version()', 'bench', NULL),
	('hybrid_index_bench._dataset_begin(text,text,jsonb,integer)', 'bench', NULL),
	('hybrid_index_bench._dataset_end(text,box2d,timestamp with time zone)', 'bench', NULL),
	('hybrid_index_bench.load_synthetic(text,text,bigint,bigint,box2d,integer,jsonb)', 'bench', NULL),
	('hybrid_index_bench.load_cities(text,text)', 'bench', NULL),
	('hybrid_index_bench.load_land(text,text,bigint)', 'bench', NULL),
	('hybrid_index_bench.load_from_table(text,regclass,name,name)', 'bench', NULL),
	('hybrid_index_bench.load_jittered(text,text,bigint,bigint,double precision)', 'bench', NULL),
	('hybrid_index_bench.drop_dataset(text,boolean)', 'bench', NULL),
	('hybrid_index_bench.add_config(text,name,jsonb,jsonb,name,text,text,jsonb,text)', 'bench', NULL),
	('hybrid_index_bench.add_workload(text,text,text,text,jsonb,text)', 'bench', NULL),
	('hybrid_index_bench.index_ddl(text,regclass,name)', 'bench', NULL),
	('hybrid_index_bench._instance(text,text)', 'bench', NULL),
	('hybrid_index_bench._set_state(hybrid_index_bench.instance,text)', 'bench', NULL),
	('hybrid_index_bench._apply_settings(text,jsonb,boolean)', 'bench', NULL),
	('hybrid_index_bench._restore_settings(jsonb)', 'bench', NULL),
	('hybrid_index_bench.server_settings_mismatch(text)', 'bench', NULL),
	('hybrid_index_bench.prepare(text,text,text)', 'bench', NULL),
	('hybrid_index_bench.build_index(text,text)', 'bench', NULL),
	('hybrid_index_bench.drop_instances(text,text)', 'bench', NULL),
	('hybrid_index_bench.checkpoint_index(text,text)', 'bench', NULL),
	('hybrid_index_bench._query_set_begin(text,text,text,integer,jsonb)', 'bench', NULL),
	('hybrid_index_bench._positions(hybrid_index_bench.dataset,integer,text)', 'bench', NULL),
	('hybrid_index_bench.make_windows(text,text,integer,double precision,text,bigint)', 'bench', NULL),
	('hybrid_index_bench.make_knn_points(text,text,integer,integer,text,bigint)', 'bench', NULL),
	('hybrid_index_bench.make_point_groups(text,text,integer,integer,bigint)', 'bench', NULL),
	('hybrid_index_bench.report(text,text,name)', 'bench', NULL),
	('hybrid_index_bench._is_query_kind(text)', 'bench', NULL),
	('hybrid_index_bench._is_probe_kind(text)', 'bench', NULL),
	('hybrid_index_bench._group_op(jsonb)', 'bench', NULL),
	('hybrid_index_bench._count_rows(regclass)', 'bench', NULL),
	('hybrid_index_bench._sample(regclass,regclass,boolean)', 'bench', NULL),
	('hybrid_index_bench._begin(text,text,text,text,integer,text,jsonb,boolean,text)', 'bench', NULL),
	('hybrid_index_bench._measure(jsonb,bigint,bigint)', 'bench', NULL),
	('hybrid_index_bench._plan(jsonb)', 'bench', NULL),
	('hybrid_index_bench._delta(jsonb,jsonb,text,text)', 'bench', NULL),
	('hybrid_index_bench._finish(jsonb,jsonb,timestamp with time zone,timestamp with time zone,hybrid_index_bench.measure_result,boolean)', 'bench', NULL),
	('hybrid_index_bench.run_workload(text,text,text,text,integer,text,jsonb,boolean,text)', 'bench', NULL),
	('hybrid_index_bench.run(text,text,text,text,integer,text,jsonb,boolean,text,bigint)', 'bench', NULL),
	('hybrid_index_bench.run_experiment(text,text,integer)', 'bench', NULL);
-- a bench line calls the function with NULL arguments (refused before it runs)
UPDATE fn SET call = format(CASE p.prokind WHEN 'p' THEN 'CALL %s(%s)' ELSE 'SELECT %s(%s)' END,
							p.oid::regproc,
							(SELECT coalesce(string_agg('NULL::' || format_type(t, NULL), ', ' ORDER BY i), '')
							 FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, i)))
FROM pg_proc p WHERE fn.kind = 'bench' AND p.oid::regprocedure::text = fn.sig;
\o

-- The listing is complete ---------------------------------------------------------

SELECT set_eq($$SELECT p.oid::regprocedure::text FROM pg_proc p
				JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
				JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
				WHERE e.extname IN ('hybrid_index', 'hybrid_index_bench')$$,
			  $$SELECT sig FROM fn$$,
			  'every function of hybrid_index and hybrid_index_bench has a line in the listing');
SELECT is((SELECT count(*) FROM fn WHERE kind = 'bench' AND call IS NULL), 0::bigint,
		  'every bench line has a call');
SELECT is((SELECT count(*) FROM pg_proc p
		   JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
		   JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
		   WHERE e.extname IN ('hybrid_index', 'hybrid_index_bench')
			 AND (p.prosecdef OR p.proconfig IS NOT NULL)), 0::bigint,
		  'no function is SECURITY DEFINER or has SET clauses: all run with the caller''s rights');
SELECT is((SELECT count(*) FROM fn f JOIN pg_proc p ON p.oid::regprocedure::text = f.sig
		   WHERE f.kind = 'handler' AND p.prorettype <> 'index_am_handler'::regtype), 0::bigint,
		  'handler lines are index_am_handler functions (not callable from SQL)');
SELECT ok(NOT has_schema_privilege('public', 'hybrid_index_bench', 'USAGE'),
		  'the benchmark''s schema is not usable by PUBLIC');

-- A role without any privilege on the table -------------------------------------
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT count(*) FROM t060.secret'),
		  '42501: permission denied for table secret', 'other: SELECT on the table is refused');
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  '42501: permission denied for table secret', 'other, no privileges: ' || f.sig || ' refused')
FROM fn f WHERE f.kind = 'content' AND f.sig NOT LIKE 'hybrid\_index\_bench.%' ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  '42501: must be owner of index secret_idx', 'other, no privileges: ' || f.sig || ' refused')
FROM fn f WHERE f.kind = 'maintenance' AND f.sig NOT LIKE 'hybrid\_index\_bench.%' ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  'ok', 'other, no privileges: ' || f.sig || ' works')
FROM fn f WHERE f.kind IN ('summary', 'value') AND f.sig NOT LIKE 'hybrid\_index\_bench.%' ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  '42501: permission denied for schema hybrid_index_bench',
		  'other, no privileges: ' || f.sig || ' refused')
FROM fn f WHERE f.sig LIKE 'hybrid\_index\_bench.%' ORDER BY f.sig;
-- a partitioned index: its partitioned table's privilege, checked first
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.parted_idx')),
		  '42501: permission denied for table parted', 'other, partitioned index: ' || f.sig || ' refused')
FROM fn f WHERE f.kind = 'content' AND f.sig NOT LIKE 'hybrid\_index\_bench.%' ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_check(''t060.parted_1_geom_idx'')'),
		  '42501: permission denied for table parted_1', 'other: the index of a partition needs SELECT on the partition');

-- The benchmark's declarations check the same, once the schema is usable
GRANT USAGE ON SCHEMA hybrid_index_bench TO hi_t060_other, hi_t060_owner, hi_t060_reader;
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  CASE f.kind WHEN 'content' THEN '42501: permission denied for table secret'
					  WHEN 'maintenance' THEN '42501: must be owner of index secret_idx' ELSE 'ok' END,
		  'other, bench schema usable: ' || f.sig || CASE WHEN f.kind = 'summary' THEN ' works' ELSE ' refused' END)
FROM fn f WHERE f.sig LIKE 'hybrid\_index\_bench.\_%' AND f.kind <> 'bench' ORDER BY f.sig;
SELECT is(left(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_bench.load_from_table(''t060'', ''t060.secret'')'), 6),
		  '42501:', 'other: the benchmark cannot load another role''s table');
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_bench.index_ddl(''x'', ''t060.secret'', ''i'')'),
		  '42501: permission denied for table config', 'other: the benchmark''s own tables are not open to it');

-- SELECT granted: content yes, maintenance still no ------------------------------
GRANT SELECT ON t060.secret, t060.parted TO hi_t060_other;
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  'ok', 'other with SELECT: ' || f.sig || ' works')
FROM fn f WHERE f.kind IN ('content', 'summary', 'value') ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_other', format(f.call, 't060.secret_idx')),
		  '42501: must be owner of index secret_idx', 'other with SELECT: ' || f.sig || ' still refused')
FROM fn f WHERE f.kind = 'maintenance' ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_other', $$SELECT hybrid_index_probe('t060.secret_idx', ST_MakeEnvelope(0, 0, 9.5, 9.5))$$),
		  'ok', 'other with SELECT: the probe counts');
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_check(''t060.secret_idx'', heapallindexed => true)'),
		  '42501: permission denied for table secret',
		  'other with SELECT: heapallindexed (a SHARE lock on the table, as LOCK TABLE asks) is refused');
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_check(''t060.parted_idx'')'),
		  'ok',
		  'other with SELECT on the partitioned table: its partitioned index is checked (its partitions'' indexes, as the rows read through the parent)');
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_check(''t060.parted_1_geom_idx'')'),
		  '42501: permission denied for table parted_1',
		  'other with SELECT on the partitioned table: a partition''s own index still needs SELECT on it');
REVOKE SELECT ON t060.secret, t060.parted FROM hi_t060_other;
SELECT is(pg_temp.as_role('hi_t060_other', 'SELECT hybrid_index_check(''t060.secret_idx'')'),
		  '42501: permission denied for table secret', 'other: refused again once SELECT is revoked');

-- pg_read_all_data reads, does not maintain ----------------------------------------
SELECT is(pg_temp.as_role('hi_t060_reader', format(f.call, 't060.secret_idx')),
		  CASE WHEN f.kind = 'maintenance' THEN '42501: must be owner of index secret_idx' ELSE 'ok' END,
		  'pg_read_all_data: ' || f.sig || CASE WHEN f.kind = 'maintenance' THEN ' refused' ELSE ' works' END)
FROM fn f WHERE f.kind IN ('content', 'maintenance', 'summary') ORDER BY f.sig;

-- Superusers only: another cluster's data directory ------------------------------
SELECT is(pg_temp.as_role(r, f.call), '42501: permission denied for function hybrid_index_upgrade_files',
		  r || ': ' || f.sig || ' refused')
FROM fn f, (VALUES ('hi_t060_other'), ('hi_t060_owner')) v(r) WHERE f.kind = 'superuser' ORDER BY r;

-- The owner: everything on its index ----------------------------------------------
SELECT is(pg_temp.as_role('hi_t060_owner', format(f.call, 't060.secret_idx')),
		  'ok', 'owner: ' || f.sig || ' works')
FROM fn f WHERE f.kind IN ('content', 'maintenance', 'summary', 'value') ORDER BY f.sig;
SELECT is(pg_temp.as_role('hi_t060_owner', 'SELECT hybrid_index_check(''t060.parted_1_geom_idx'')'),
		  'ok', 'owner: the index of a partition is checked');
SELECT is(pg_temp.as_role('hi_t060_owner', 'SELECT hybrid_index_check(''t060.secret_idx'', heapallindexed => true)'),
		  'ok', 'owner: heapallindexed works');
-- and the benchmark's installer runs it on that table with its own rights
SELECT is(pg_temp.as_role('hi_t060_owner', 'SELECT hybrid_index_bench.is_hybrid_am(''hyrtree'')'),
		  'ok', 'owner: a benchmark helper without tables works');
SELECT is(hybrid_index_bench.load_from_table('t060_secret', 't060.secret'), 10000::bigint,
		  'superuser: the benchmark loads the table');
SELECT is(hybrid_index_bench._count_rows('t060.secret'), 10000::bigint,
		  'the benchmark counts rows of a regclass');

-- GUCs --------------------------------------------------------------------------------
-- (insert_batch: how many of its own inserted entries a session keeps, at
-- most 32 MB of memory, like work_mem)
SELECT is((SELECT array_agg(name::text ORDER BY name) FROM pg_settings
		   WHERE name LIKE 'hybrid\_index.%' AND context = 'user'),
		  ARRAY['hybrid_index.insert_batch', 'hybrid_index.postgis_functions', 'hybrid_index.recheck'],
		  'only hybrid_index.recheck, postgis_functions and insert_batch are settable by any user');
SELECT is((SELECT count(*) FROM pg_settings
		   WHERE name LIKE 'hybrid\_index.%' AND context NOT IN ('user', 'superuser', 'sighup', 'postmaster')),
		  0::bigint, 'every other setting is superuser, sighup or postmaster');
SELECT is(pg_temp.as_role('hi_t060_other', format('SET %s = %L', name, setting)),
		  format('42501: permission denied to set parameter "%s"', name),
		  'other: SET ' || name || ' refused')
FROM pg_settings WHERE name LIKE 'hybrid\_index.%' AND context = 'superuser' ORDER BY name;
SELECT is(pg_temp.as_role('hi_t060_other', 'SET hybrid_index.recheck = off'), 'ok',
		  'other: SET hybrid_index.recheck works');
SELECT is(pg_temp.as_role('hi_t060_other', 'SET hybrid_index.postgis_functions = off'), 'ok',
		  'other: SET hybrid_index.postgis_functions works');

SELECT * FROM finish();
ROLLBACK;
