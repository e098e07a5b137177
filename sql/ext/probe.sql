-- Index-only probes ----------------------------------------------------------
-- One search on an index of a geometry column (any access method: ours,
-- GiST, ...), counting the TIDs it returns without touching the heap: the
-- index alone, as FESTIval measures the papers' experiments.

CREATE FUNCTION hybrid_index_probe(index regclass, query geometry, op text DEFAULT '&&')
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_probe(regclass, geometry, text) IS
	'Number of TIDs the index returns for geom <op> query (op: &&, ~=, ~, @); reads no heap tuple';

CREATE FUNCTION hybrid_index_probe_knn(index regclass, point geometry, k int)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION hybrid_index_probe_knn(regclass, geometry, int) IS
	'Ordered scan by geom <-> point stopped after k TIDs; returns how many it got; reads no heap tuple';
