# Functions over scripts/deno_runtime.pins, the pinned Deno runtime (source this file from bash; coreutils only):
#
#   pinned_version                      the Deno version, e.g. 2.9.6
#   pinned_package ARCH                 the npm package of the runtime for amd64 or arm64, e.g. @deno/linux-x64-glibc
#   pinned_field PACKAGE COLUMN         a column of PACKAGE's line (2 version, 3 architecture, 4 integrity, 5 sha256)
#   npm_tarball_name PACKAGE VERSION    the file `npm pack` writes, e.g. deno-linux-x64-glibc-2.9.6.tgz
#   check_npm_tarball PACKAGE FILE      fails unless FILE has PACKAGE's pinned npm integrity
#   check_runtime_binary PACKAGE FILE   fails unless FILE has PACKAGE's pinned SHA-256
#
# A failed check prints what was expected and found, on stderr, prefixed with $DENO_RUNTIME_CALLER (default
# deno_runtime), and returns 1.

DENO_RUNTIME_PINS="${DENO_RUNTIME_PINS:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/deno_runtime.pins}"

_deno_runtime_fail() {
  printf '%s: %s\n' "${DENO_RUNTIME_CALLER:-deno_runtime}" "$*" >&2
  return 1
}

pinned_field() {
  local value
  value="$(awk -v p="$1" -v c="$2" '!/^#/ && $1 == p { print $c; exit }' "$DENO_RUNTIME_PINS")"
  [ -n "$value" ] || _deno_runtime_fail "$DENO_RUNTIME_PINS has no line for $1: restore it from git" || return 1
  printf '%s\n' "$value"
}

pinned_version() {
  pinned_field deno 2
}

pinned_package() {
  local name
  name="$(awk -v a="$1" '!/^#/ && $3 == a { print $1; exit }' "$DENO_RUNTIME_PINS")"
  [ -n "$name" ] || _deno_runtime_fail "$DENO_RUNTIME_PINS pins no runtime for $1 (it has amd64 and arm64)" || return 1
  printf '%s\n' "$name"
}

npm_tarball_name() {
  local name="${1#@}"
  printf '%s-%s.tgz\n' "${name//\//-}" "$2"
}

# The SRI form npm records (sha512-<base64 of the digest>) of a file.
_npm_integrity_of() {
  printf 'sha512-'
  sha512sum -- "$1" | cut -d' ' -f1 | sed 's/../\\x&/g' | { read -r escaped; printf '%b' "$escaped"; } | base64 -w0
}

check_npm_tarball() {
  local package="$1" file="$2" pinned actual
  pinned="$(pinned_field "$package" 4)" || return 1
  [ -f "$file" ] || _deno_runtime_fail "$file is missing: npm pack did not write $package" || return 1
  actual="$(_npm_integrity_of "$file")"
  [ "$actual" = "$pinned" ] || _deno_runtime_fail "$file ($package) has npm integrity $actual, but" \
    "scripts/deno_runtime.pins pins $pinned: these are not the pinned runtime's bytes (the registry or a mirror" \
    "served other ones, or the npm cache is damaged: npm cache clean --force); nothing was installed or packed" ||
    return 1
}

check_runtime_binary() {
  local package="$1" file="$2" pinned actual
  pinned="$(pinned_field "$package" 5)" || return 1
  [ -f "$file" ] || _deno_runtime_fail "$file is missing: $package has no deno binary" || return 1
  actual="$(sha256sum -- "$file" | cut -d' ' -f1)"
  [ "$actual" = "$pinned" ] || _deno_runtime_fail "$file ($package) has SHA-256 $actual, but" \
    "scripts/deno_runtime.pins pins $pinned: this is not the pinned Deno binary; nothing was installed or packed" ||
    return 1
}
