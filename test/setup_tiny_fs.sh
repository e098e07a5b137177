#!/usr/bin/env bash
# test/setup_tiny_fs.sh — as root: make the tiny filesystem that
# test/t/032_resource_faults.pl fills up (a tier on a full disk).
#
#   bash test/setup_tiny_fs.sh            # (re)create and mount it
#   bash test/setup_tiny_fs.sh --remove   # unmount and delete it
#
# Creates an 8 MB ext4 image ($HI_TINY_FS.img), loop-mounts it at
# $HI_TINY_FS (default /tmp/hybrid_index_tinyfs) and hands it to the user
# the tests run as (postgres). Every call starts from an empty filesystem.
# The TAP test itself runs as postgres and cannot mount anything: without
# this step it skips its full-disk part and says so.
set -euo pipefail

MNT=${HI_TINY_FS:-/tmp/hybrid_index_tinyfs}
IMG="$MNT.img"
OWNER=${HI_TINY_FS_OWNER:-postgres}
SIZE_MB=${HI_TINY_FS_MB:-8}

if [ "$(id -u)" != 0 ]; then
	echo "setup_tiny_fs: run as root (it mounts a loop device)" >&2
	exit 1
fi

if mountpoint -q "$MNT"; then
	umount "$MNT"
fi
if [ "${1:-}" = "--remove" ]; then
	rm -f "$IMG"
	rmdir "$MNT" 2>/dev/null || true
	echo "setup_tiny_fs: removed $MNT"
	exit 0
fi

mkdir -p "$MNT"
rm -f "$IMG"
truncate -s "${SIZE_MB}M" "$IMG"
mkfs.ext4 -q -F -m 0 "$IMG"
mount -o loop "$IMG" "$MNT"
chown "$OWNER": "$MNT"
chmod 700 "$MNT"
echo "setup_tiny_fs: $(df -h "$MNT" | tail -n 1)"
