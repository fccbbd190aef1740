#!/usr/bin/env bash
# Locate or build the binaries the integration tests need: kube-apiserver, kubectl, etcd, etcdctl, helm.
# Prints the directory holding all five on stdout (progress goes to stderr).
#
# Order of preference:
#   1. KUBEBUILDER_ASSETS, when it already holds every binary;
#   2. the versioned cache outside the clone: ${TEST_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/test-binaries}/<key>;
#   3. a build from the Go module proxy (a wrapper module, below), staged and moved into place atomically.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
HELM_VERSION="${HELM_VERSION:-v4.3.1}"
RECIPE=1   # bump when the recipe below changes, so caches are rebuilt
BINARIES=(kube-apiserver kubectl etcd etcdctl helm)

log() { printf 'test-binaries: %s\n' "$*" >&2; }

has_all() {
  local dir="$1" b
  for b in "${BINARIES[@]}"; do [ -x "$dir/$b" ] || return 1; done
}

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && has_all "$KUBEBUILDER_ASSETS"; then
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  printf '%s\n' "$KUBEBUILDER_ASSETS"
  exit 0
fi

# Binaries already on PATH (all five): gathered as links in one directory.
on_path=true
for b in "${BINARIES[@]}"; do command -v "$b" >/dev/null || on_path=false; done
if $on_path; then
  dir="${TEST_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/test-binaries}/from-path"
  mkdir -p "$dir"
  for b in "${BINARIES[@]}"; do ln -sf "$(command -v "$b")" "$dir/$b"; done
  log "using the binaries on PATH ($("$dir/kube-apiserver" --version 2>/dev/null))"
  printf '%s\n' "$dir"
  exit 0
fi

os_arch="$(go env GOOS)-$(go env GOARCH)"
key="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}_r${RECIPE}_${os_arch}"
cache_root="${TEST_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/test-binaries}"
dest="$cache_root/$key"

if [ -f "$dest/.complete" ] && has_all "$dest"; then
  log "cached in $dest"
  printf '%s\n' "$dest"
  exit 0
fi

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer, or set KUBEBUILDER_ASSETS"; exit 1; }

mkdir -p "$cache_root"
stage="$(mktemp -d "$cache_root/.stage.XXXXXX")"
work="$(mktemp -d)"
trap 'rm -rf "$stage" "$work"' EXIT
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOWORK=off CGO_ENABLED=0
start=$SECONDS

# --- kube-apiserver and kubectl: a wrapper module replacing every staging module with its published tag.
minor="$(printf '%s' "$K8S_VERSION" | cut -d. -f2)"
staging_version="v0.${K8S_VERSION#v1.}"
log "building kube-apiserver and kubectl $K8S_VERSION"
mkdir -p "$work/kube" && cd "$work/kube"
go mod init ccm-test-binaries/kube >/dev/null 2>&1
go_line="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[ -n "$go_line" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"; exit 1; }
go_directive="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$go_line" | head -1)"
godebug="$(sed -n 's/^godebug default=\(go[0-9.]*\)$/\1/p' "$go_line" | head -1)"
edit_args=(-go="$go_directive" -require="k8s.io/kubernetes@$K8S_VERSION"
  -tool=k8s.io/kubernetes/cmd/kube-apiserver -tool=k8s.io/kubernetes/cmd/kubectl)
[ -n "$godebug" ] && edit_args+=(-godebug="default=$godebug")
# Every `k8s.io/<x> v0.0.0` requirement of k8s.io/kubernetes is a staging module: replace it with its tag.
for m in $(awk '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$go_line" | sort -u); do
  edit_args+=(-replace="$m=$m@$staging_version")
done
go mod edit "${edit_args[@]}"
go mod tidy >&2
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
go build -trimpath -tags=selinux,notest -ldflags="$ldflags" -o "$stage/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -tags=selinux,notest -ldflags="$ldflags" -o "$stage/kubectl" k8s.io/kubernetes/cmd/kubectl
log "kube-apiserver and kubectl built after $((SECONDS - start)) s"

# --- etcd and etcdctl: their go.mods require real versions, so a wrapper needs no replaces.
log "building etcd and etcdctl $ETCD_VERSION"
mkdir -p "$work/etcd" && cd "$work/etcd"
go mod init ccm-test-binaries/etcd >/dev/null 2>&1
go mod edit -go=1.25.0 -godebug=default=go1.25 \
  -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" -require="go.etcd.io/etcd/etcdctl/v3@$ETCD_VERSION" \
  -tool=go.etcd.io/etcd/server/v3 -tool=go.etcd.io/etcd/etcdctl/v3
go mod tidy >&2
go build -trimpath -ldflags="-s -w" -o "$stage/etcd" go.etcd.io/etcd/server/v3
go build -trimpath -ldflags="-s -w" -o "$stage/etcdctl" go.etcd.io/etcd/etcdctl/v3
log "etcd built after $((SECONDS - start)) s"

# --- helm: no replace directives, a plain install.
log "building helm $HELM_VERSION"
helm_major="${HELM_VERSION%%.*}"
helm_module="helm.sh/helm/$helm_major"
[ "$helm_major" = "v2" ] && { log "helm v2 is not supported"; exit 1; }
GOBIN="$stage" go install -trimpath \
  -ldflags "-s -w -X $helm_module/internal/version.version=$HELM_VERSION -X $helm_module/internal/version.gitTreeState=clean" \
  "$helm_module/cmd/helm@$HELM_VERSION"
log "helm built after $((SECONDS - start)) s"

"$stage/kube-apiserver" --version >&2
"$stage/etcd" --version | head -1 >&2
"$stage/helm" version --short >&2

touch "$stage/.complete"
rm -rf "$dest"
mv "$stage" "$dest"
log "all binaries in $dest after $((SECONDS - start)) s"
printf '%s\n' "$dest"
