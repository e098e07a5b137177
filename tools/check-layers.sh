#!/usr/bin/env bash
# check-layers.sh — calls go down the layers only (../shared/ARCHITECTURE.md,
# "Layers"; src/README.md).  For every folder of src/ it lists the folders
# whose headers its files include, and fails when one includes a header of
# a folder above it or beside it.  Run by tools/test-all.sh.
#
#   bash tools/check-layers.sh
#
# The order, top to bottom (a folder may include headers of folders below
# it and of its own folder only):
LAYERS=(
	"top"     # src/*.c: _PG_init, shared-memory composition, utility and planner hooks
	"am"      # index AM glue and the SQL-callable functions
	"efind lbgrid" # eFIND's buffers over the R-tree; LB-Grid's log-buckets over the Grid File
	"grid"    # Grid File core (lbgrid, hgrid)
	"rtree"   # R-tree core (efind, hyrtree); its leaf format also holds grids' NULL lists
	"payload" # INCLUDE rows keyed by TID, beside every AM's structure
	"policy"  # placement policies: none/upper, WMA, random, H-Grid hot regions
	"core"    # index handles, AM registry, slot hooks, options, checkpoints
	"cache"   # the shared page cache
	"log"     # redo log
	"storage" # page store, page table, tier files, batched I/O
	"base"    # shared types, GUC variables, shared root, build spill files
	"geom"    # boxes of PostGIS geometries
	"compat"  # the differences between PostgreSQL major versions
)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT/src"

declare -A RANK
for i in "${!LAYERS[@]}"; do
	for f in ${LAYERS[$i]}; do
		RANK[$f]=$i
	done
done

fail=0
# every folder of src/ must have a place in the order
for d in */; do
	d=${d%/}
	if [ -z "${RANK[$d]+x}" ]; then
		echo "check-layers: src/$d/ is not in the layer order of tools/check-layers.sh" >&2
		fail=1
	fi
done

for i in "${!LAYERS[@]}"; do
	for folder in ${LAYERS[$i]}; do
		if [ "$folder" = top ]; then
			files=$(ls ./*.c ./*.h 2>/dev/null || true)
		else
			files=$(ls "$folder"/*.c "$folder"/*.h 2>/dev/null || true)
		fi
		[ -n "$files" ] || continue
		used=()
		# our headers only: a path that exists under src/ (PostgreSQL's
		# own storage/, utils/, ... headers are not ours)
		while IFS=: read -r file inc; do
			if [ -f "$inc" ]; then
				case "$inc" in
				*/*) to=${inc%%/*} ;;
				*) to=top ;;
				esac
			elif [ "$folder" != top ] && [ -f "$folder/$inc" ]; then
				to=$folder
			else
				continue
			fi
			[ "$to" = "$folder" ] && continue
			used+=("$to")
			if [ "${RANK[$to]}" -le "$i" ]; then
				echo "check-layers: ${file#./} includes $inc: $to is not below $folder" >&2
				fail=1
			fi
		done < <(grep -H -o '^#include "[^"]*"' $files | sed 's/#include "\(.*\)"/\1/')
		printf '%-8s -> %s\n' "$folder" "$(printf '%s\n' "${used[@]:-}" | sort -u | tr '\n' ' ')"
	done
done

if [ "$fail" != 0 ]; then
	echo "check-layers: FAILED (calls must go down the layers; hand what a lower layer needs down as a callback)" >&2
	exit 1
fi
echo "check-layers: ok"
