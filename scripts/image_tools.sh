#!/usr/bin/env bash
# Locate or build the tools the image tests need that Debian does not package: the CNCF distribution registry
# (`registry`, an OCI registry serving plain HTTP on loopback for `skopeo copy` and `helm push`).
# Prints the directory holding them on stdout (progress goes to stderr).
#
# Like scripts/test_binaries.sh: a versioned cache outside the clone,
# ${IMAGE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/image-tools}/<key>, built from the Go module
# proxy when missing, staged and moved into place atomically, reused when present.
set -euo pipefail

REGISTRY_VERSION="${REGISTRY_VERSION:-v3.1.2}"
RECIPE=1   # bump when the recipe below changes, so caches are rebuilt
BINARIES=(registry)

log() { printf 'image-tools: %s\n' "$*" >&2; }

has_all() {
  local dir="$1" b
  for b in "${BINARIES[@]}"; do [ -x "$dir/$b" ] || return 1; done
}

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer to build the test registry"; exit 1; }
os_arch="$(go env GOOS)-$(go env GOARCH)"
key="registry-${REGISTRY_VERSION}_r${RECIPE}_${os_arch}"
cache_root="${IMAGE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/image-tools}"
dest="$cache_root/$key"

if [ -f "$dest/.complete" ] && has_all "$dest"; then
  log "cached in $dest"
  printf '%s\n' "$dest"
  exit 0
fi

mkdir -p "$cache_root"
stage="$(mktemp -d "$cache_root/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOWORK=off CGO_ENABLED=0
start=$SECONDS

# The registry's go.mod has no replace directives: a plain install of the released module.
log "building the distribution registry $REGISTRY_VERSION"
module=github.com/distribution/distribution/v3
GOBIN="$stage" go install -trimpath -ldflags "-s -w -X $module/version.version=$REGISTRY_VERSION" \
  "$module/cmd/registry@$REGISTRY_VERSION"
"$stage/registry" --version >&2

touch "$stage/.complete"
chmod 0755 "$stage"
rm -rf "$dest"
mv "$stage" "$dest"
log "registry in $dest after $((SECONDS - start)) s"
printf '%s\n' "$dest"
