#!/usr/bin/env bash
# Builds the release artifacts of ankra-cloud-ccm into dist/ (or --out DIR):
#
#   ankra-cloud-ccm-<VERSION>-linux-{amd64,arm64}.tar.gz        the controller: bundle + Deno runtime + launcher
#   ankra-cloud-simulator-<VERSION>-linux-{amd64,arm64}.tar.gz  the Ankra Cloud API simulator, for users' CI
#   ankra-cloud-ccm-<VERSION>-linux-{amd64,arm64}                single-file executables (`deno compile`), only where
#                                                                Deno's download site is reachable
#   ankra-cloud-ccm-<VERSION>.spdx.json                          the SBOM (SPDX 2.3) of the tarballs: the programs,
#                                                                the Deno runtime, every npm package of deno.lock
#   SHA256SUMS                                                   over every artifact above
#
#   bash scripts/build.sh [--out DIR] [--no-compile] [--runtime-from DIR]      (also: deno task release)
#
# The Deno runtime is the one of scripts/deno_runtime.pins: each platform package's .tgz comes from
# `npm pack --ignore-scripts` (or from --runtime-from DIR, which holds the .tgz files `npm pack` names, e.g. for a
# build without the registry), and the build stops unless the .tgz has its pinned npm integrity and its deno binary
# its pinned SHA-256. Nothing of the packages runs: only the binary is taken.
#
# Each tarball holds one directory <name>-<VERSION>-linux-<arch>/ with
#   bin/<name>                 the launcher (POSIX sh): runs the bundle on the bundled runtime
#   lib/<name>/deno            the pinned Deno runtime from npm (@deno/linux-x64-glibc, @deno/linux-arm64-glibc)
#   lib/<name>/<name>.js       the program, one minified `deno bundle` file (no module graph, nothing to fetch)
#   lib/<name>/deno-dir/       an empty directory that is DENO_DIR: Deno needs the setting to exist, not to be writable
#
# The bytes are reproducible: the same commit gives the same SHA256SUMS. Every mtime is SOURCE_DATE_EPOCH (from the
# environment, else the last commit's time, else a fixed date outside git), entries are sorted, owners are 0:0
# numerically, modes are set explicitly, and gzip -n leaves out the name and time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
export LC_ALL=C TZ=UTC

out=dist
compile=true
runtime_from=
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    --no-compile) compile=false; shift ;;
    --runtime-from) runtime_from="$2"; shift 2 ;;
    --runtime-from=*) runtime_from="${1#--runtime-from=}"; shift ;;
    *) echo "build: unknown argument $1 (use --out DIR, --no-compile, --runtime-from DIR)" >&2; exit 2 ;;
  esac
done
DENO_RUNTIME_CALLER=build
source scripts/deno_runtime.sh

version="$(deno eval 'import { VERSION } from "./lib/version.ts"; console.log(VERSION)')"
deno_version="$(pinned_version)"
# 2024-01-01T00:00:00Z when this is not a git checkout (a source tarball).
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 1704067200)}"
export SOURCE_DATE_EPOCH
declare -A npm_packages=([amd64]="$(pinned_package amd64)" [arm64]="$(pinned_package arm64)")
declare -A compile_targets=([amd64]=x86_64-unknown-linux-gnu [arm64]=aarch64-unknown-linux-gnu)
# The controller's permissions: one list for the launcher, the image, the Containerfile and `deno task run`
# (lib/runtime_permissions.ts; no --allow-run, --allow-write or --allow-ffi). The release launcher also lets it read
# the directory of each file its command line or environment names (kubeconfig, token file, CA bundle, TLS files).
permissions_module='import * as p from "./lib/runtime_permissions.ts";'
ccm_permissions="$(deno eval "$permissions_module console.log(p.PERMISSION_FLAGS.join(' '))")"
ccm_launcher_permissions="$(deno eval "$permissions_module console.log(p.launcherPermissionFlags())")"
ccm_launcher_rule="$(deno eval "$permissions_module console.log(p.launcherReadRule())")"
# The V8 flags, from the same module (V8_FLAGS, each explained there; measured in bench/memory_report.md): GC after
# the first sync, a small young generation, no optimizing compiler (the controller is I/O-bound), smaller heap growth.
ccm_v8_flags="$(deno eval "$permissions_module console.log(p.V8_FLAGS_ARGUMENT)")"
ccm_flags="$ccm_permissions $ccm_v8_flags"
# The simulator's data plane starts HAProxy (setpriv, haproxy) and writes its configurations to a temporary folder.
simulator_flags="--allow-net --allow-read --allow-env --allow-run --allow-write"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$out"/ankra-cloud-ccm-* "$out"/ankra-cloud-simulator-* "$out/SHA256SUMS"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The pinned Deno runtime per architecture, first: a runtime that is not the pinned one stops the build before any
# work. No package script runs (--ignore-scripts; only package/deno is used).
for arch in amd64 arm64; do
  package="${npm_packages[$arch]}"
  tgz="$work/npm-$arch/$(npm_tarball_name "$package" "$deno_version")"
  mkdir -p "$work/npm-$arch"
  if [ -n "$runtime_from" ]; then
    cp -- "$runtime_from/${tgz##*/}" "$tgz" ||
      { echo "build: --runtime-from $runtime_from has no ${tgz##*/} (npm pack $package@$deno_version makes it)" >&2; exit 1; }
  else
    # npm's cache serves it when it has it (--prefer-offline): the pins, not npm, decide whether it is good.
    (cd "$work/npm-$arch" && npm pack --ignore-scripts --prefer-offline --silent "$package@$deno_version" >/dev/null)
  fi
  check_npm_tarball "$package" "$tgz"
  tar -xzf "$tgz" -C "$work/npm-$arch" --no-same-owner package/deno
  check_runtime_binary "$package" "$work/npm-$arch/package/deno"
done

# One minified file each: less code to hold than the module graph (see bench/memory_report.md). The simulator is
# its own program; the controller's bundle holds none of it (tests/integration/bundle_test.ts).
deno bundle --minify --platform=deno -o "$work/ankra-cloud-ccm.js" main.ts >/dev/null 2>&1
deno bundle --minify --platform=deno -o "$work/ankra-cloud-simulator.js" simulator/main.ts >/dev/null 2>&1

# write_launcher NAME FLAGS FILE [PRELUDE]: a launcher that needs no HOME, no PATH and no writable directory. DENO_DIR points
# at the install's empty, read-only deno-dir (Deno refuses to start when it cannot name a cache directory, e.g.
# without HOME; it runs fine when that directory cannot be written). --no-code-cache: no V8 code cache to write.
# --no-config: a deno.json in the working directory changes nothing. --cached-only: it never downloads.
write_launcher() {
  local name="$1" flags="$2" file="$3" prelude="${4:-}"
  cat >"$file" <<LAUNCHER
#!/bin/sh
# $name $version: the bundled program on its pinned Deno runtime ($deno_version).
set -e
self="\$(readlink -f -- "\$0" 2>/dev/null || printf '%s' "\$0")"
lib="\${self%/*}/../lib/$name"
export DENO_DIR="\$lib/deno-dir"
export DENO_NO_UPDATE_CHECK=1
export DENO_NO_PROMPT=1
export MALLOC_ARENA_MAX="\${MALLOC_ARENA_MAX:-1}"
$prelude
exec "\$lib/deno" run $flags --cached-only --no-code-cache --no-config --no-prompt "\$lib/$name.js" "\$@"
LAUNCHER
}

# reproducible_tar DIR ENTRY OUTPUT: ENTRY under DIR as a gzip'd tar with sorted entries, fixed mtimes, 0:0 owners.
reproducible_tar() {
  tar -C "$1" --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    -cf - "$2" | gzip -n >"$3"
}

artifacts=()
pids=()
for name in ankra-cloud-ccm ankra-cloud-simulator; do
  prelude=
  if [ "$name" = ankra-cloud-ccm ]; then
    flags="${ccm_flags/"$ccm_permissions"/"$ccm_launcher_permissions"}"
    prelude="$ccm_launcher_rule"
  else
    flags="$simulator_flags"
  fi
  for arch in amd64 arm64; do
    base="$name-$version-linux-$arch"
    root="$work/tree/$base"
    mkdir -p "$root/bin" "$root/lib/$name/deno-dir"
    cp "$work/npm-$arch/package/deno" "$root/lib/$name/deno"
    cp "$work/$name.js" "$root/lib/$name/$name.js"
    write_launcher "$name" "$flags" "$root/bin/$name" "$prelude"
    find "$root" -type d -exec chmod 0755 {} +
    find "$root" -type f -exec chmod 0644 {} +
    chmod 0755 "$root/bin/$name" "$root/lib/$name/deno"
    chmod 0555 "$root/lib/$name/deno-dir"
    # Compressing is most of the time: the four tarballs at once.
    reproducible_tar "$work/tree" "$base" "$out/$base.tar.gz" &
    pids+=($!)
    artifacts+=("$base.tar.gz")
  done
done
for pid in "${pids[@]}"; do wait "$pid"; done
for artifact in "${artifacts[@]}"; do
  echo "build: $out/$artifact (bundle on the Deno $deno_version runtime from npm, integrity checked)"
done
# The SBOM of the tarballs, from the trees just packed, deno.lock and the pins (scripts/write_release_sbom.ts).
sbom="$(deno run --allow-read --allow-write="$out" --allow-env=SOURCE_DATE_EPOCH scripts/write_release_sbom.ts \
  "$out" "$work/tree")"
artifacts+=("${sbom##*/}")
echo "build: $sbom (SBOM, SPDX 2.3)"

# Single-file executables where Deno's download site is reachable (deno compile fetches its runtime per target).
if $compile; then
  compiled=()
  for arch in amd64 arm64; do
    executable="ankra-cloud-ccm-$version-linux-$arch"
    log="$work/compile-$arch.log"
    if NO_COLOR=1 timeout 600 deno compile $ccm_flags --no-code-cache --target "${compile_targets[$arch]}" \
      --output "$out/$executable" "$work/ankra-cloud-ccm.js" >"$log" 2>&1; then
      compiled+=("$executable")
    else
      (cd "$out" && rm -f "${compiled[@]}" "$executable")
      compiled=()
      # The line naming the download that failed, e.g. "1: error sending request for url (…/denort-….zip): …".
      reason="$(grep -m1 'url (' "$log" | sed 's/^ *[0-9]*: //' | cut -c1-200 || true)"
      echo "build: no single-file executables: deno compile cannot fetch its runtime here (${reason:-see deno compile}); the tarballs above are the release" >&2
      break
    fi
  done
  for executable in "${compiled[@]}"; do
    artifacts+=("$executable")
    echo "build: $out/$executable (deno compile)"
  done
else
  echo "build: deno compile skipped (--no-compile)" >&2
fi

(cd "$out" && sha256sum -- "${artifacts[@]}" | sort -k2 >SHA256SUMS)
echo "build: $out/SHA256SUMS ($version, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
