#!/usr/bin/env bash
# Locate or build what the real-node tests (tests/real/real_node_test.ts) and the real two-node cluster run besides the
# test binaries:
#   kubelet, kube-controller-manager, kube-scheduler, kube-proxy   $K8S_VERSION (scripts/versions.sh), from the Go
#                                                                  module proxy with the wrapper module of go_build.sh
#   containerd, containerd-shim-runc-v2, ctr                       $CONTAINERD_VERSION, from the Go module proxy
#   pause-image/                                                   an OCI layout (tag 3.10) of Kubernetes' own
#                                                                  build/pause/linux/pause.c, `gcc -static`
# The container runtime underneath is Debian's runc (not built here).
# Prints the directory holding all of them on stdout (progress and timings go to stderr).
#
# Cached like every Go build of the tests (scripts/go_build.sh), in
# ${NODE_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/node-binaries}/<key>. Builds run at `nice -n 10`
# (NICE= for normal priority). Needs Go 1.25+, gcc and libc6-dev (Debian packages) for pause.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/go_build.sh"

K8S_VERSION="${K8S_VERSION:-$KUBERNETES_VERSION}"
PAUSE_TAG="3.10"
RECIPE=2 # bump when the recipe below changes, so caches are rebuilt
KUBE=(kubelet kube-controller-manager kube-scheduler kube-proxy)
CONTAINERD=(containerd containerd-shim-runc-v2 ctr)

log() { printf 'node-binaries: %s\n' "$*" >&2; }

has_all() {
  local dir="$1" b
  for b in "${KUBE[@]}" "${CONTAINERD[@]}"; do [ -x "$dir/$b" ] || return 1; done
  [ -f "$dir/pause-image/index.json" ]
}

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer to build the node binaries"; exit 1; }
command -v gcc >/dev/null || { log "gcc is not on PATH: install the Debian packages gcc and libc6-dev (for pause)"; exit 1; }
key="k8s-${K8S_VERSION}_containerd-${CONTAINERD_VERSION}_pause-${PAUSE_TAG}_r${RECIPE}_$(go_platform)"
dest="$(go_cache_root NODE_BIN_CACHE node-binaries)/$key"
if go_cached "$dest" has_all; then printf '%s\n' "$dest"; exit 0; fi
go_build_begin "$dest"

# --- the Kubernetes node components.
mkdir -p "$WORK/kube" && cd "$WORK/kube"
kube_wrapper_module "$K8S_VERSION" "${KUBE[@]/#/k8s.io/kubernetes/cmd/}"
go mod tidy >&2
n=0
for c in "${KUBE[@]}"; do
  n=$((n + 1))
  go_step "$c $K8S_VERSION ($n of $((${#KUBE[@]} + 1)))" \
    $NICE go build -trimpath -tags=selinux,notest -ldflags="$KUBE_LDFLAGS" -o "$STAGE/$c" "k8s.io/kubernetes/cmd/$c"
done

# --- containerd 2.x: its go.mod needs no replace directives for these commands, so requiring it is enough. CGO off;
# the tags drop the snapshotters that need cgo or kernel features this does not use.
t0=$SECONDS
mkdir -p "$WORK/containerd" && cd "$WORK/containerd"
go mod init ccm-tests/containerd >/dev/null 2>&1
cm=github.com/containerd/containerd/v2
cd_gomod="$(go mod download -json "$cm@$CONTAINERD_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[ -n "$cd_gomod" ] || { log "could not download $cm@$CONTAINERD_VERSION from the Go module proxy"; exit 1; }
go mod edit -go="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$cd_gomod" | sed -n 1p)" -require="$cm@$CONTAINERD_VERSION" \
  -tool="$cm/cmd/containerd" -tool="$cm/cmd/containerd-shim-runc-v2" -tool="$cm/cmd/ctr"
go mod tidy >&2
build_containerd() {
  local c
  for c in "${CONTAINERD[@]}"; do
    $NICE go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
      -ldflags "-s -w -X $cm/version.Version=$CONTAINERD_VERSION -X $cm/version.Revision=go-module-proxy" \
      -o "$STAGE/$c" "$cm/cmd/$c"
  done
}
go_step "containerd, its shim and ctr $CONTAINERD_VERSION (${#KUBE[@]} + 1 of $((${#KUBE[@]} + 1)))" build_containerd

# --- pause: the pod sandbox image, from the source Kubernetes ships.
t0=$SECONDS
pause_src="$KUBE_DIR/build/pause/linux/pause.c"
[ -f "$pause_src" ] || { log "no $pause_src in the k8s.io/kubernetes module"; exit 1; }
mkdir -p "$WORK/pause-root"
gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_TAG" -o "$WORK/pause-root/pause" "$pause_src"
strip "$WORK/pause-root/pause"
pack_oci_layout "$WORK/pause-root" "$STAGE/pause-image" "$PAUSE_TAG" '"Entrypoint":["/pause"],"User":"65535:65535"'
log "pause $PAUSE_TAG image built in $((SECONDS - t0)) s"

"$STAGE/kubelet" --version >&2
"$STAGE/containerd" --version >&2
go_build_end "$dest" "the node binaries"
