-- The hgrid access method: H-Grid, the two-level Grid File whose
-- sub-directories and buckets live on either tier, placed by hot-region
-- detection (thesis section 4.3).

CREATE FUNCTION hgrid_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE ACCESS METHOD hgrid TYPE INDEX HANDLER hgrid_handler;
COMMENT ON ACCESS METHOD hgrid IS
	'H-Grid: two-level Grid File over the flash and fast tiers, hot regions on the fast tier';

CREATE OPERATOR CLASS hgrid_geometry_ops
	DEFAULT FOR TYPE geometry USING hgrid AS
	OPERATOR 3 && (geometry, geometry),
	OPERATOR 6 ~= (geometry, geometry),
	OPERATOR 7 ~ (geometry, geometry),
	OPERATOR 8 @ (geometry, geometry),
	OPERATOR 13 <-> (geometry, geometry) FOR ORDER BY pg_catalog.float_ops;
