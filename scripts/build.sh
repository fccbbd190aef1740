#!/usr/bin/env bash
# Builds the ankra-cloud-ccm binaries for linux amd64 and arm64 into dist/.
#
# With access to Deno's download site (a release pipeline, the Containerfile): `deno compile` makes one
# self-contained executable per architecture. Without it (these development machines reach package registries
# only), the fallback builds, per architecture, a directory and tarball holding the Deno runtime from the npm
# registry (@deno/linux-x64-glibc, @deno/linux-arm64-glibc), one bundled dist/ankra-cloud-ccm.js and a launcher
# bin/ankra-cloud-ccm — the same program, started the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
version="$(sed -n 's/.*"version": "\(.*\)".*/\1/p' deno.json | head -1)"
deno_version="$(deno --version | head -1 | cut -d' ' -f2)"
# V8 flags measured in bench/memory_report.md: GC after the first sync, a small young generation, no optimizing
# compiler (the controller is I/O-bound), smaller heap growth.
flags=(--allow-all --v8-flags=--expose-gc,--max-semi-space-size=1,--lite-mode,--optimize-for-size)
rm -rf dist && mkdir -p dist
# One minified file: less code to hold than the module graph (see bench/memory_report.md).
deno bundle --minify --platform=deno -o dist/ankra-cloud-ccm.js main.ts >/dev/null
declare -A targets=([amd64]=x86_64-unknown-linux-gnu [arm64]=aarch64-unknown-linux-gnu)
declare -A npm_packages=([amd64]=@deno/linux-x64-glibc [arm64]=@deno/linux-arm64-glibc)
compiled=true
for arch in amd64 arm64; do
  if ! deno compile "${flags[@]}" --target "${targets[$arch]}" --output "dist/ankra-cloud-ccm-linux-$arch" dist/ankra-cloud-ccm.js \
    >/dev/null 2>"dist/compile-$arch.log"; then
    compiled=false
    break
  fi
done
if $compiled; then
  rm -f dist/compile-*.log
  echo "build: dist/ankra-cloud-ccm-linux-amd64 and -arm64 (deno compile)"
  exit 0
fi
echo "build: deno compile cannot download its runtime here ($(tail -1 dist/compile-*.log | head -1)); building the bundle fallback" >&2
rm -f dist/ankra-cloud-ccm-linux-* dist/compile-*.log
for arch in amd64 arm64; do
  root="dist/ankra-cloud-ccm-$version-linux-$arch"
  mkdir -p "$root/bin" "$root/lib"
  work="$(mktemp -d)"
  (cd "$work" && npm pack --silent "${npm_packages[$arch]}@$deno_version" >/dev/null && tar -xzf ./*.tgz)
  cp "$work/package/deno" "$root/bin/deno"
  chmod +x "$root/bin/deno"
  rm -rf "$work"
  cp dist/ankra-cloud-ccm.js "$root/lib/ankra-cloud-ccm.js"
  cat > "$root/bin/ankra-cloud-ccm" <<'LAUNCHER'
#!/bin/sh
# ankra-cloud-ccm: the bundled controller on its pinned Deno runtime.
here="$(dirname "$(readlink -f "$0")")"
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-1}"
export DENO_NO_UPDATE_CHECK=1
exec "$here/deno" run --allow-all --cached-only --no-prompt --v8-flags=--expose-gc,--max-semi-space-size=1,--lite-mode,--optimize-for-size \
  "$here/../lib/ankra-cloud-ccm.js" "$@"
LAUNCHER
  chmod +x "$root/bin/ankra-cloud-ccm"
  tar -C dist -czf "$root.tar.gz" "$(basename "$root")"
  echo "build: $root.tar.gz"
done
