-- The lbgrid access method: LB-Grid, the two-level Grid File with
-- log-buckets and a Bucket Translation Table; WITH (logging = off) gives
-- GFFM, buckets updated in place (thesis ch. 3).

CREATE FUNCTION lbgrid_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE ACCESS METHOD lbgrid TYPE INDEX HANDLER lbgrid_handler;
COMMENT ON ACCESS METHOD lbgrid IS
	'Two-level Grid File for points and boxes: LB-Grid (log-buckets, BTT), or GFFM with logging = off';

-- geom ~= ANY(array) and geom && ANY(array) are the group point queries and
-- batch window queries of the thesis (Algorithm 8).
CREATE OPERATOR CLASS lbgrid_geometry_ops
	DEFAULT FOR TYPE geometry USING lbgrid AS
	OPERATOR 3 && (geometry, geometry),
	OPERATOR 6 ~= (geometry, geometry),
	OPERATOR 7 ~ (geometry, geometry),
	OPERATOR 8 @ (geometry, geometry),
	OPERATOR 13 <-> (geometry, geometry) FOR ORDER BY pg_catalog.float_ops;
