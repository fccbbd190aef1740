#!/usr/bin/env bash
# Locate or build what the real-node tests (tests/real/real_node_test.ts) run besides the test binaries:
#   kubelet, kube-controller-manager, kube-scheduler, kube-proxy   $K8S_VERSION, from the Go module proxy with the same
#                                                                  wrapper module scripts/test_binaries.sh uses
#   containerd, containerd-shim-runc-v2, ctr                       $CONTAINERD_VERSION, from the Go module proxy
#   pause-image/                                                   an OCI layout (tag 3.10) of Kubernetes' own
#                                                                  build/pause/linux/pause.c, `gcc -static`
# The container runtime underneath is Debian's runc (not built here).
# Prints the directory holding all of them on stdout (progress and timings go to stderr).
#
# Like scripts/test_binaries.sh: a versioned cache outside the clone,
# ${NODE_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/node-binaries}/<key>, staged and moved into place
# atomically, reused when present. Builds run at `nice -n 10` (NICE= for normal priority). Needs Go 1.25+, gcc and
# libc6-dev (Debian packages) for pause.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.35.4}"
CONTAINERD_VERSION="${CONTAINERD_VERSION:-v2.2.9}"
PAUSE_TAG="3.10"
RECIPE=1 # bump when the recipe below changes, so caches are rebuilt
KUBE=(kubelet kube-controller-manager kube-scheduler kube-proxy)
CONTAINERD=(containerd containerd-shim-runc-v2 ctr)
NICE="${NICE-nice -n 10}"

log() { printf 'node-binaries: %s\n' "$*" >&2; }

has_all() {
  local dir="$1" b
  for b in "${KUBE[@]}" "${CONTAINERD[@]}"; do [ -x "$dir/$b" ] || return 1; done
  [ -f "$dir/pause-image/index.json" ]
}

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer to build the node binaries"; exit 1; }
command -v gcc >/dev/null || { log "gcc is not on PATH: install the Debian packages gcc and libc6-dev (for pause)"; exit 1; }
os_arch="$(go env GOOS)-$(go env GOARCH)"
key="k8s-${K8S_VERSION}_containerd-${CONTAINERD_VERSION}_pause-${PAUSE_TAG}_r${RECIPE}_${os_arch}"
cache_root="${NODE_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/node-binaries}"
dest="$cache_root/$key"

if [ -f "$dest/.complete" ] && has_all "$dest"; then
  log "cached in $dest"
  printf '%s\n' "$dest"
  exit 0
fi

mkdir -p "$cache_root"
stage="$(mktemp -d "$cache_root/.stage.XXXXXX")"
work="$(mktemp -d)"
trap 'rm -rf "$stage" "$work"' EXIT
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOWORK=off CGO_ENABLED=0
start=$SECONDS

# --- the Kubernetes node components: k8s.io/kubernetes required by a wrapper module, every staging module
# (`k8s.io/<x> v0.0.0` in its go.mod) replaced by its published tag v0.<minor>.<patch>.
minor="$(printf '%s' "$K8S_VERSION" | cut -d. -f2)"
staging_version="v0.${K8S_VERSION#v1.}"
mkdir -p "$work/kube" && cd "$work/kube"
go mod init ccm-node-binaries/kube >/dev/null 2>&1
kube_info="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION")"
kube_gomod="$(printf '%s' "$kube_info" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
kube_dir="$(printf '%s' "$kube_info" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
[ -n "$kube_gomod" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"; exit 1; }
edit_args=(-go="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$kube_gomod" | head -1)" -require="k8s.io/kubernetes@$K8S_VERSION")
for c in "${KUBE[@]}"; do edit_args+=(-tool="k8s.io/kubernetes/cmd/$c"); done
godebug="$(sed -n 's/^godebug default=\(go[0-9.]*\)$/\1/p' "$kube_gomod" | head -1)"
[ -n "$godebug" ] && edit_args+=(-godebug="default=$godebug")
for m in $(awk '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$kube_gomod" | sort -u); do
  edit_args+=(-replace="$m=$m@$staging_version")
done
go mod edit "${edit_args[@]}"
go mod tidy >&2
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
for c in "${KUBE[@]}"; do
  t0=$SECONDS
  $NICE go build -trimpath -tags=selinux,notest -ldflags="$ldflags" -o "$stage/$c" "k8s.io/kubernetes/cmd/$c"
  log "$c $K8S_VERSION built in $((SECONDS - t0)) s"
done

# --- containerd 2.x: its go.mod needs no replace directives for these commands, so requiring it is enough. CGO off;
# the tags drop the snapshotters that need cgo or kernel features this does not use.
t0=$SECONDS
mkdir -p "$work/containerd" && cd "$work/containerd"
go mod init ccm-node-binaries/containerd >/dev/null 2>&1
cm=github.com/containerd/containerd/v2
cd_gomod="$(go mod download -json "$cm@$CONTAINERD_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[ -n "$cd_gomod" ] || { log "could not download $cm@$CONTAINERD_VERSION from the Go module proxy"; exit 1; }
go mod edit -go="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$cd_gomod" | head -1)" -require="$cm@$CONTAINERD_VERSION" \
  -tool="$cm/cmd/containerd" -tool="$cm/cmd/containerd-shim-runc-v2" -tool="$cm/cmd/ctr"
go mod tidy >&2
for c in "${CONTAINERD[@]}"; do
  $NICE go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X $cm/version.Version=$CONTAINERD_VERSION -X $cm/version.Revision=go-module-proxy" \
    -o "$stage/$c" "$cm/cmd/$c"
done
log "containerd $CONTAINERD_VERSION built in $((SECONDS - t0)) s"

# --- pause: the pod sandbox image, from the source Kubernetes ships, as a one-layer OCI layout (sorted tar, owner 0:0,
# mtime 0, gzip -n: the same bytes on every build).
t0=$SECONDS
pause_src="$kube_dir/build/pause/linux/pause.c"
[ -f "$pause_src" ] || { log "no $pause_src in the k8s.io/kubernetes module"; exit 1; }
mkdir -p "$work/pause-root"
gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_TAG" -o "$work/pause-root/pause" "$pause_src"
strip "$work/pause-root/pause"
layout="$stage/pause-image"
mkdir -p "$layout/blobs/sha256"
sha() { sha256sum "$1" | cut -d' ' -f1; }
blob() { local d; d="$(sha "$1")"; cp "$1" "$layout/blobs/sha256/$d"; printf '%s' "$d"; }
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/pause-root" -cf "$work/layer.tar" .
gzip -n -9 -c "$work/layer.tar" >"$work/layer.tar.gz"
arch="$(go env GOARCH)"
printf '{"architecture":"%s","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"os":"linux","rootfs":{"diff_ids":["sha256:%s"],"type":"layers"}}' \
  "$arch" "$(sha "$work/layer.tar")" >"$work/config.json"
config="$(blob "$work/config.json")"
layer="$(blob "$work/layer.tar.gz")"
printf '{"config":{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.config.v1+json","size":%d},"layers":[{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","size":%d}],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}' \
  "$config" "$(stat -c %s "$work/config.json")" "$layer" "$(stat -c %s "$work/layer.tar.gz")" >"$work/manifest.json"
manifest="$(blob "$work/manifest.json")"
printf '{"manifests":[{"annotations":{"org.opencontainers.image.ref.name":"%s"},"digest":"sha256:%s","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{"architecture":"%s","os":"linux"},"size":%d}],"schemaVersion":2}' \
  "$PAUSE_TAG" "$manifest" "$arch" "$(stat -c %s "$work/manifest.json")" >"$layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
log "pause $PAUSE_TAG image built in $((SECONDS - t0)) s"

"$stage/kubelet" --version >&2
"$stage/containerd" --version >&2

touch "$stage/.complete"
chmod 0755 "$stage"
rm -rf "$dest"
mv "$stage" "$dest"
log "all node binaries in $dest after $((SECONDS - start)) s"
printf '%s\n' "$dest"
