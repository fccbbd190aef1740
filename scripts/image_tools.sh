#!/usr/bin/env bash
# Locate or build the tools the image tests need that Debian does not package: the CNCF distribution registry
# (`registry`, an OCI registry serving plain HTTP on loopback for `skopeo copy` and `helm push`).
# Prints the directory holding them on stdout (progress goes to stderr).
#
# Cached like every Go build of the tests (scripts/go_build.sh), in
# ${IMAGE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/image-tools}/<key>.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/go_build.sh"

RECIPE=1 # bump when the recipe below changes, so caches are rebuilt

log() { printf 'image-tools: %s\n' "$*" >&2; }

has_all() { [ -x "$1/registry" ]; }

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer to build the test registry"; exit 1; }
dest="$(go_cache_root IMAGE_TOOLS_CACHE image-tools)/registry-${REGISTRY_VERSION}_r${RECIPE}_$(go_platform)"
if go_cached "$dest" has_all; then printf '%s\n' "$dest"; exit 0; fi
go_build_begin "$dest"

# The registry's go.mod has no replace directives: a plain install of the released module.
log "building the distribution registry $REGISTRY_VERSION"
module=github.com/distribution/distribution/v3
GOBIN="$STAGE" $NICE go install -trimpath -ldflags "-s -w -X $module/version.version=$REGISTRY_VERSION" \
  "$module/cmd/registry@$REGISTRY_VERSION"
"$STAGE/registry" --version >&2
go_build_end "$dest" "the registry"
