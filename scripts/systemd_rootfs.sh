#!/usr/bin/env bash
# Locate or build the Debian root file system in which tests/real/real_systemd_test.ts boots a real systemd
# (systemd-nspawn --boot). Prints its directory on stdout (progress goes to stderr).
#
#   bash scripts/systemd_rootfs.sh
#
# The root is Debian 12 "bookworm", mmdebstrap --variant=minbase plus systemd (as /sbin/init), dbus, nss-systemd (for
# DynamicUser= names), procps and ca-certificates: about 220 MB, about 30 s with a fast mirror. It is built once into
# ${SYSTEMD_ROOTFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm}/systemd-rootfs-<key>/, staged and moved
# into place atomically, and never written again: tests boot it with --volatile=overlay, so every write of a boot goes
# to a tmpfs. The key names the suite, the package list and the recipe, so changing either builds a new one.
#
# Needs root and mmdebstrap (Debian package `mmdebstrap`), and the Debian mirror (SYSTEMD_ROOTFS_MIRROR, default
# http://deb.debian.org/debian) for the first build.
set -euo pipefail

SUITE=bookworm
PACKAGES=systemd,systemd-sysv,dbus,libnss-systemd,procps,ca-certificates
RECIPE=2 # bump when the recipe below changes, so caches are rebuilt
MIRROR="${SYSTEMD_ROOTFS_MIRROR:-http://deb.debian.org/debian}"

log() { printf 'systemd-rootfs: %s\n' "$*" >&2; }

arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"
# A short digest of the package list keeps the directory name readable whatever the list holds.
key="$SUITE-$arch-$(printf '%s' "$PACKAGES" | sha256sum | cut -c1-12)-r$RECIPE"
cache_root="${SYSTEMD_ROOTFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm}"
dest="$cache_root/systemd-rootfs-$key"

if [ -f "$dest/.complete" ] && [ -x "$dest/usr/lib/systemd/systemd" ]; then
  log "cached in $dest"
  printf '%s\n' "$dest"
  exit 0
fi

[ "$(id -u)" = 0 ] || { log "building the root file system needs root (mmdebstrap --mode=root)"; exit 1; }
command -v mmdebstrap >/dev/null || {
  log "mmdebstrap is not installed: apt-get install --no-install-recommends mmdebstrap"
  exit 1
}

mkdir -p "$cache_root"
stage="$(mktemp -d "$cache_root/.systemd-rootfs-stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
start=$SECONDS
log "building a $SUITE root with $PACKAGES from $MIRROR"
# The hostname names the container in its journal. An empty machine-id makes systemd generate a new one at every
# boot (a root without one would be taken as a first boot and run firstboot's prompts). /etc/hosts as Debian's
# installer writes it (no package ships one): without it `localhost` does not resolve.
nice -n 10 mmdebstrap --quiet --mode=root --variant=minbase --include="$PACKAGES" \
  --customize-hook='echo ccm-systemd > "$1/etc/hostname"' \
  --customize-hook='rm -f "$1/etc/machine-id" && : > "$1/etc/machine-id"' \
  --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" > "$1/etc/hosts"' \
  "$SUITE" "$stage/root" "$MIRROR" >&2
touch "$stage/root/.complete"
rm -rf "$dest"
mv "$stage/root" "$dest"
log "built $dest in $((SECONDS - start)) s ($(du -sh "$dest" | cut -f1))"
printf '%s\n' "$dest"
