# The build-and-cache recipe shared by the scripts that build Go programs for the tests (test_binaries.sh,
# node_binaries.sh, e2e_binaries.sh, image_tools.sh). Sourced, not run. Each script names a cache directory outside
# the clone and a key (versions + recipe + platform); a complete entry is reused, otherwise the build goes into a
# staging directory that is moved into place in one step, so an interrupted build never leaves a half entry.
#
#   go_cache_root <ENV_NAME> <kind>      the cache root: $ENV_NAME if set, else ~/.cache/ankra-cloud-ccm/<kind>
#   go_cached <dest> <check>             true (and says so) when <dest> is complete and `<check> <dest>` passes
#   go_build_begin <dest>                sets STAGE and WORK (removed on exit), the Go environment and START; a script
#                                        building several entries runs each begin…end in a subshell
#   go_build_end <dest> <what>           marks STAGE complete, moves it to <dest>, prints <dest>
#   go_step <what> <command…>            runs one long build step (a `go build` of one binary): says it starts, every
#                                        PROGRESS_EVERY seconds (30) that it is still going and for how long, and at
#                                        its end how long it took
#   kube_wrapper_module <version> <tool>…  in the current directory: a module requiring k8s.io/kubernetes@<version>
#                                        with every staging module replaced by its tag; sets KUBE_DIR, KUBE_LDFLAGS
#   pack_oci_layout <root> <layout> <tag> <image config JSON members>
#                                        a one-layer OCI layout of <root> (sorted tar, owner 0:0, mtime 0, gzip -n: the
#                                        same bytes on every build), e.g. '"Entrypoint":["/pause"],"User":"65535:65535"' 
# The caller defines `log`.
# shellcheck shell=bash

source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

NICE="${NICE-nice -n 10}"

go_cache_root() {
  local override="${!1:-}"
  printf '%s\n' "${override:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/$2}"
}

go_platform() {
  printf '%s-%s\n' "$(go env GOOS)" "$(go env GOARCH)"
}

go_cached() {
  local dest="$1" check="$2"
  [ -f "$dest/.complete" ] && "$check" "$dest" || return 1
  log "cached in $dest"
}

go_build_begin() {
  command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer"; exit 1; }
  mkdir -p "$(dirname "$1")"
  STAGE="$(mktemp -d "$(dirname "$1")/.stage.XXXXXX")"
  WORK="$(mktemp -d)"
  trap 'rm -rf "$STAGE" "$WORK"' EXIT
  export GOTOOLCHAIN="${KUBERNETES_GOTOOLCHAIN:-local}" GOFLAGS=-buildvcs=false GOWORK=off CGO_ENABLED=0
  START=$SECONDS
}

go_build_end() {
  local dest="$1" what="$2"
  touch "$STAGE/.complete"
  chmod 0755 "$STAGE"
  rm -rf "$dest"
  mv "$STAGE" "$dest"
  log "$what in $dest after $((SECONDS - START)) s"
  printf '%s\n' "$dest"
}

go_step() {
  local what="$1" t0=$SECONDS ticker rc=0
  shift
  log "$what: building"
  # The ticker writes to stderr only (a caller reading stdout, the printed directory, must not wait for it), and takes
  # its sleep with it when it ends.
  (
    trap 'kill "$s" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "${PROGRESS_EVERY:-30}" &
      s=$!
      wait "$s"
      log "$what: still building, $((SECONDS - t0)) s so far"
    done
  ) >/dev/null &
  ticker=$!
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ "$rc" -ne 0 ]; then
    log "$what: failed after $((SECONDS - t0)) s"
    return "$rc"
  fi
  log "$what: built in $((SECONDS - t0)) s"
}

kube_wrapper_module() {
  local version="$1" info gomod minor edit_args m p
  shift
  go mod init "ccm-tests/kube-$version" >/dev/null 2>&1
  info="$(go mod download -json "k8s.io/kubernetes@$version")"
  gomod="$(printf '%s' "$info" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  KUBE_DIR="$(printf '%s' "$info" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [ -n "$gomod" ] || { log "could not download k8s.io/kubernetes@$version from the Go module proxy"; exit 1; }
  edit_args=(-go="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod" | sed -n 1p)" -require="k8s.io/kubernetes@$version")
  for p in "$@"; do edit_args+=(-tool="$p"); done
  m="$(sed -n 's/^godebug default=\(go[0-9.]*\)$/\1/p' "$gomod" | sed -n 1p)"
  [ -n "$m" ] && edit_args+=(-godebug="default=$m")
  # Every `k8s.io/<x> v0.0.0` requirement of k8s.io/kubernetes is a staging module: its tag is v0.<minor>.<patch>.
  for m in $(awk '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$gomod" | sort -u); do
    edit_args+=(-replace="$m=$m@v0.${version#v1.}")
  done
  go mod edit "${edit_args[@]}"
  minor="$(printf '%s' "$version" | cut -d. -f2)"
  KUBE_LDFLAGS="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    KUBE_LDFLAGS="$KUBE_LDFLAGS -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
}

pack_oci_layout() {
  local from="$1" layout="$2" tag="$3" members="$4" arch config layer manifest tmp
  tmp="$(mktemp -d)"
  mkdir -p "$layout/blobs/sha256"
  _sha() { sha256sum "$1" | cut -d' ' -f1; }
  _blob() { local d; d="$(_sha "$1")"; cp "$1" "$layout/blobs/sha256/$d"; printf '%s' "$d"; }
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$from" -cf "$tmp/layer.tar" .
  gzip -n -6 -c "$tmp/layer.tar" >"$tmp/layer.tar.gz"
  arch="$(go env GOARCH)"
  printf '{"architecture":"%s","config":{%s},"os":"linux","rootfs":{"diff_ids":["sha256:%s"],"type":"layers"}}' \
    "$arch" "$members" "$(_sha "$tmp/layer.tar")" >"$tmp/config.json"
  config="$(_blob "$tmp/config.json")"
  layer="$(_blob "$tmp/layer.tar.gz")"
  printf '{"config":{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.config.v1+json","size":%d},"layers":[{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","size":%d}],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}' \
    "$config" "$(stat -c %s "$tmp/config.json")" "$layer" "$(stat -c %s "$tmp/layer.tar.gz")" >"$tmp/manifest.json"
  manifest="$(_blob "$tmp/manifest.json")"
  printf '{"manifests":[{"annotations":{"org.opencontainers.image.ref.name":"%s"},"digest":"sha256:%s","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{"architecture":"%s","os":"linux"},"size":%d}],"schemaVersion":2}' \
    "$tag" "$manifest" "$arch" "$(stat -c %s "$tmp/manifest.json")" >"$layout/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
  rm -rf "$tmp"
}
