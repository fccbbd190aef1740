#!/usr/bin/env bash
# Print the path of the pinned Deno, installing it from the npm registry when it is missing. The runtime is the one of
# scripts/deno_runtime.pins: the packages `deno` and `@deno/linux-<x64|arm64>-glibc`, fetched with
# `npm pack --ignore-scripts` (no install script of theirs runs), each .tgz checked against its pinned npm integrity
# and the binary against its pinned SHA-256 before anything is put in place. They are laid out as `npm install` would
# (node_modules/deno/, node_modules/@deno/linux-…-glibc/), and the binary is copied to node_modules/deno/deno: the job
# of the `deno` package's postinstall (install.cjs), which links the platform package's binary there.
# The registry comes from the machine's npm configuration; the install lives outside the clone. An install checked
# once is not hashed again while its binary keeps its size, inode and modification and change times to the nanosecond
# (the stamp file .checked beside it; a write to the binary moves its change time, which no user can set back).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DENO_RUNTIME_CALLER=deno.sh
source "$here/deno_runtime.sh"
DENO_VERSION="$(pinned_version)"
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "deno.sh: no Deno runtime is pinned for $(uname -m) (scripts/deno_runtime.pins: linux amd64, arm64)" >&2; exit 1 ;;
esac
platform="$(pinned_package "$arch")"
root="${DENO_INSTALL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/deno-$DENO_VERSION}"
bin="$root/node_modules/deno/deno"
stamp="$root/.checked"

stamp_line() { printf '%s %s\n' "$(pinned_field "$platform" 5)" "$(stat -c '%s %i %.9Y %.9Z' -- "$bin")"; }

# An install that is already the pinned one: print it (and stamp it, once its binary has been hashed).
installed() {
  if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(stamp_line)" ]; then
    return 0
  fi
  if [ -x "$bin" ] && check_runtime_binary "$platform" "$bin" 2>/dev/null; then
    stamp_line >"$stamp"
    return 0
  fi
  return 1
}
if installed; then
  printf '%s\n' "$bin"
  exit 0
fi

command -v npm >/dev/null || { echo "deno.sh: npm is not on PATH: install Node.js and npm first" >&2; exit 1; }
mkdir -p "$root"
# One install at a time (shells sourcing scripts/env.sh side by side): the others wait, then find it done.
exec 9>"$root/.lock"
flock 9
if installed; then
  printf '%s\n' "$bin"
  exit 0
fi
stage="$(mktemp -d "$root/.install.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
# --prefer-offline: npm's cache serves the packages when it has them; the pins, not npm, decide whether they are good.
(cd "$stage" && npm pack --ignore-scripts --prefer-offline --silent --no-audit --no-fund --loglevel=error \
  "deno@$DENO_VERSION" "$platform@$DENO_VERSION" >/dev/null)
for package in deno "$platform"; do
  tgz="$stage/$(npm_tarball_name "$package" "$DENO_VERSION")"
  check_npm_tarball "$package" "$tgz"
  mkdir -p "$stage/node_modules/$package"
  tar -xzf "$tgz" -C "$stage/node_modules/$package" --strip-components=1 --no-same-owner
done
check_runtime_binary "$platform" "$stage/node_modules/$platform/deno"
cp -- "$stage/node_modules/$platform/deno" "$stage/node_modules/deno/deno"
chmod 0755 "$stage/node_modules/$platform/deno" "$stage/node_modules/deno/deno"
# The version is read whole into a variable first: `--version | grep -q` under pipefail fails when grep exits at its
# first match and deno then dies of SIGPIPE writing its next line.
reported="$("$stage/node_modules/deno/deno" --version 2>&1)" ||
  { echo "deno.sh: the downloaded deno $DENO_VERSION cannot run here (deno --version failed: ${reported%%$'\n'*})" >&2; exit 1; }
case "$reported" in
  "deno $DENO_VERSION "*) ;;
  *) echo "deno.sh: the installed deno reports '${reported%%$'\n'*}', not $DENO_VERSION" >&2; exit 1 ;;
esac
rm -rf "$root/node_modules"
mv "$stage/node_modules" "$root/node_modules"
stamp_line >"$stamp"
printf '%s\n' "$bin"
