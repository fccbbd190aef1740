#!/usr/bin/env bash
# Print the path of the pinned Deno, installing it from the npm registry (package `deno`) when it is missing.
# The registry comes from the machine's npm configuration; the install lives outside the clone.
set -euo pipefail
DENO_VERSION="2.9.6"
root="${DENO_INSTALL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/deno-$DENO_VERSION}"
bin="$root/node_modules/deno/deno"
if [ ! -x "$bin" ] || ! "$bin" --version 2>/dev/null | grep -q "^deno $DENO_VERSION "; then
  command -v npm >/dev/null || { echo "deno.sh: npm is not on PATH: install Node.js and npm first" >&2; exit 1; }
  mkdir -p "$root"
  (cd "$root" && npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error "deno@$DENO_VERSION" >&2)
  [ -x "$bin" ] || bin="$(find "$root/node_modules/@deno" -maxdepth 2 -name deno -type f | head -1)"
  "$bin" --version | grep -q "^deno $DENO_VERSION " || { echo "deno.sh: installed deno does not report $DENO_VERSION" >&2; exit 1; }
fi
printf '%s\n' "$bin"
