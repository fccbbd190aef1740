#!/usr/bin/env bash
# Locate or build the binaries the integration tests need: kube-apiserver, kubectl, etcd, etcdctl, helm.
# Prints the directory holding all five on stdout (progress goes to stderr).
#
#   K8S_VERSION=<tag>   another Kubernetes than scripts/versions.sh's KUBERNETES_VERSION (the old-version tier asks
#                       for KUBERNETES_OLDEST_VERSION); etcd and helm are shared by every Kubernetes version
#
# Order of preference:
#   1. KUBEBUILDER_ASSETS, when it already holds every binary;
#   2. the binaries on PATH, when all five are there (and no K8S_VERSION is asked for);
#   3. the versioned caches outside the clone, one entry per component (scripts/go_build.sh), built from the Go module
#      proxy when missing; the printed directory links the three entries.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/go_build.sh"

asked_version="${K8S_VERSION:-}"
K8S_VERSION="${K8S_VERSION:-$KUBERNETES_VERSION}"
RECIPE=2 # bump when a recipe below changes, so caches are rebuilt
BINARIES=(kube-apiserver kubectl etcd etcdctl helm)

log() { printf 'test-binaries: %s\n' "$*" >&2; }

has() {
  local dir="$1" b
  shift
  for b in "$@"; do [ -x "$dir/$b" ] || return 1; done
}
has_all() { has "$1" "${BINARIES[@]}"; }
has_kube() { has "$1" kube-apiserver kubectl; }
has_etcd() { has "$1" etcd etcdctl; }
has_helm() { has "$1" helm; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -z "$asked_version" ] && has_all "$KUBEBUILDER_ASSETS"; then
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  printf '%s\n' "$KUBEBUILDER_ASSETS"
  exit 0
fi

cache_root="$(go_cache_root TEST_BIN_CACHE test-binaries)"

# Binaries already on PATH (all five): gathered as links in one directory.
on_path=true
for b in "${BINARIES[@]}"; do command -v "$b" >/dev/null || on_path=false; done
if $on_path && [ -z "$asked_version" ]; then
  dir="$cache_root/from-path"
  mkdir -p "$dir"
  for b in "${BINARIES[@]}"; do ln -sf "$(command -v "$b")" "$dir/$b"; done
  log "using the binaries on PATH ($("$dir/kube-apiserver" --version 2>/dev/null))"
  printf '%s\n' "$dir"
  exit 0
fi

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer, or set KUBEBUILDER_ASSETS"; exit 1; }
platform="$(go_platform)"
kube_dest="$cache_root/kube-${K8S_VERSION}_r${RECIPE}_${platform}"
etcd_dest="$cache_root/etcd-${ETCD_VERSION}_r${RECIPE}_${platform}"
helm_dest="$cache_root/helm-${HELM_VERSION}_r${RECIPE}_${platform}"
set_dir="$cache_root/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}_r${RECIPE}_${platform}"

# --- kube-apiserver and kubectl: the wrapper module of k8s.io/kubernetes (go_build.sh).
go_cached "$kube_dest" has_kube || (
  go_build_begin "$kube_dest"
  log "building kube-apiserver and kubectl $K8S_VERSION"
  mkdir -p "$WORK/kube" && cd "$WORK/kube"
  kube_wrapper_module "$K8S_VERSION" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  go mod tidy >&2
  n=0
  for c in kube-apiserver kubectl; do
    n=$((n + 1))
    go_step "$c $K8S_VERSION ($n of 2)" \
      $NICE go build -trimpath -tags=selinux,notest -ldflags="$KUBE_LDFLAGS" -o "$STAGE/$c" "k8s.io/kubernetes/cmd/$c"
  done
  "$STAGE/kube-apiserver" --version >&2
  go_build_end "$kube_dest" "kube-apiserver and kubectl $K8S_VERSION" >/dev/null
)

# --- etcd and etcdctl: their go.mods require real versions, so a wrapper needs no replaces.
go_cached "$etcd_dest" has_etcd || (
  go_build_begin "$etcd_dest"
  log "building etcd and etcdctl $ETCD_VERSION"
  mkdir -p "$WORK/etcd" && cd "$WORK/etcd"
  go mod init ccm-tests/etcd >/dev/null 2>&1
  go mod edit -go=1.25.0 -godebug=default=go1.25 \
    -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" -require="go.etcd.io/etcd/etcdctl/v3@$ETCD_VERSION" \
    -tool=go.etcd.io/etcd/server/v3 -tool=go.etcd.io/etcd/etcdctl/v3
  go mod tidy >&2
  go_step "etcd $ETCD_VERSION (1 of 2)" $NICE go build -trimpath -ldflags="-s -w" -o "$STAGE/etcd" go.etcd.io/etcd/server/v3
  go_step "etcdctl $ETCD_VERSION (2 of 2)" \
    $NICE go build -trimpath -ldflags="-s -w" -o "$STAGE/etcdctl" go.etcd.io/etcd/etcdctl/v3
  "$STAGE/etcd" --version | sed -n 1p >&2
  go_build_end "$etcd_dest" "etcd and etcdctl $ETCD_VERSION" >/dev/null
)

# --- helm: no replace directives, a plain install.
go_cached "$helm_dest" has_helm || (
  go_build_begin "$helm_dest"
  log "building helm $HELM_VERSION"
  helm_major="${HELM_VERSION%%.*}"
  helm_module="helm.sh/helm/$helm_major"
  [ "$helm_major" = "v2" ] && { log "helm v2 is not supported"; exit 1; }
  GOBIN="$STAGE" go_step "helm $HELM_VERSION" $NICE go install -trimpath \
    -ldflags "-s -w -X $helm_module/internal/version.version=$HELM_VERSION -X $helm_module/internal/version.gitTreeState=clean" \
    "$helm_module/cmd/helm@$HELM_VERSION"
  "$STAGE/helm" version --short >&2
  go_build_end "$helm_dest" "helm $HELM_VERSION" >/dev/null
)

# --- the set: one directory linking the three entries (KUBEBUILDER_ASSETS of the tests).
mkdir -p "$set_dir"
for b in kube-apiserver kubectl; do ln -sfn "$kube_dest/$b" "$set_dir/$b"; done
for b in etcd etcdctl; do ln -sfn "$etcd_dest/$b" "$set_dir/$b"; done
ln -sfn "$helm_dest/helm" "$set_dir/helm"
has_all "$set_dir" || { log "the set $set_dir is incomplete"; exit 1; }
log "Kubernetes $K8S_VERSION, etcd $ETCD_VERSION and helm $HELM_VERSION in $set_dir"
printf '%s\n' "$set_dir"
