-- hybrid_index 0.2.0 -> 0.3.0 (CHANGELOG.md).  No SQL object changed: the
-- release changes the library (INCLUDE rows keyed by the Z-order of their
-- entries, map file format 4).  Indexes built by 0.2.0 are read as they
-- are; REINDEX gives an index with INCLUDE columns the new, faster layout.

\echo Use "ALTER EXTENSION hybrid_index UPDATE TO '0.3.0'" to load this file. \quit
