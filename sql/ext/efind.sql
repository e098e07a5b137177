-- The efind access method: an R-tree under the eFIND framework ------------
-- (write buffer with per-page modification trees, flushing policies
-- m/mh/mha/mhao, read buffer lru/s2q/2q, temporal control, durability
-- through the index's redo log).  Parameters: reloptions of the index or
-- the hybrid_index.efind_* settings and hybrid_index.flush_policy.

CREATE FUNCTION efind_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE ACCESS METHOD efind TYPE INDEX HANDLER efind_handler;
COMMENT ON ACCESS METHOD efind IS
	'R-tree under the eFIND flash-aware framework (write buffer, flushing policies, read buffer, temporal control)';

CREATE OPERATOR CLASS efind_geometry_ops
	DEFAULT FOR TYPE geometry USING efind AS
	OPERATOR 3 && (geometry, geometry),
	OPERATOR 6 ~= (geometry, geometry),
	OPERATOR 7 ~ (geometry, geometry),
	OPERATOR 8 @ (geometry, geometry),
	OPERATOR 13 <-> (geometry, geometry) FOR ORDER BY pg_catalog.float_ops;
