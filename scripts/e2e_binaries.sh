#!/usr/bin/env bash
# Locate or build what the upstream LoadBalancer e2e run (tests/real/e2e_loadbalancer_test.ts) and the real
# two-node cluster's traffic tests (tests/real/real_cluster_test.ts) need:
#   e2e.test        Kubernetes' own e2e suite at $K8S_VERSION, `go test -c` of a wrapper package that imports
#                   k8s.io/kubernetes/test/e2e and its network tests (the `[Feature:LoadBalancer]` specs live there;
#                   the other suites are left out to halve the compile)
#   agnhost-image/  an OCI layout tagged $AGNHOST_TAG: the agnhost binary from k8s.io/kubernetes/test/images/agnhost
#                   (CGO off) plus, when Debian's busybox-static is installed, busybox's sh/nc/wget applets, and the
#                   host's curl with the libraries it links (the e2e tests exec `sh -c "... nc ..."` and `curl` in
#                   agnhost pods)
#   coredns-image/  an OCI layout tagged $COREDNS_VERSION of CoreDNS (github.com/coredns/coredns), the cluster's DNS
# Prints the directory holding both on stdout (progress and timings go to stderr).
#
# Like scripts/node_binaries.sh: a versioned cache outside the clone,
# ${E2E_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/e2e-binaries}/<key>, staged and moved into place
# atomically, reused when present. Builds run at `nice -n 10` (NICE= for normal priority). Needs Go 1.25+.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.35.4}"
AGNHOST_TAG="2.59"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
RECIPE=5 # bump when the recipe below changes, so caches are rebuilt
NICE="${NICE-nice -n 10}"

log() { printf 'e2e-binaries: %s\n' "$*" >&2; }

has_all() {
  local dir="$1"
  [ -x "$dir/e2e.test" ] && [ -f "$dir/agnhost-image/index.json" ] && [ -f "$dir/coredns-image/index.json" ]
}

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer to build e2e.test and agnhost"; exit 1; }
os_arch="$(go env GOOS)-$(go env GOARCH)"
key="k8s-${K8S_VERSION}_agnhost-${AGNHOST_TAG}_coredns-${COREDNS_VERSION}_r${RECIPE}_${os_arch}"
cache_root="${E2E_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/e2e-binaries}"
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

# --- the wrapper module: k8s.io/kubernetes required, every staging module (`k8s.io/<x> v0.0.0` in its go.mod) replaced
# by its published tag v0.<minor>.<patch> — the recipe of scripts/test_binaries.sh.
minor="$(printf '%s' "$K8S_VERSION" | cut -d. -f2)"
staging_version="v0.${K8S_VERSION#v1.}"
mkdir -p "$work/e2e/lb" && cd "$work/e2e"
go mod init ccm-e2e-binaries/e2e >/dev/null 2>&1
kube_gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[ -n "$kube_gomod" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"; exit 1; }
edit_args=(-go="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$kube_gomod" | head -1)" -require="k8s.io/kubernetes@$K8S_VERSION"
  -tool=k8s.io/kubernetes/test/images/agnhost)
godebug="$(sed -n 's/^godebug default=\(go[0-9.]*\)$/\1/p' "$kube_gomod" | head -1)"
[ -n "$godebug" ] && edit_args+=(-godebug="default=$godebug")
for m in $(awk '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$kube_gomod" | sort -u); do
  edit_args+=(-replace="$m=$m@$staging_version")
done
go mod edit "${edit_args[@]}"

# The suite's entry point: what upstream's test/e2e/e2e_test.go does (flags, embedded manifests, RunE2ETests), with
# only the network tests registered.
cat >"$work/e2e/lb/e2e_test.go" <<'EOF'
package lb

import (
	"flag"
	"os"
	"testing"

	"k8s.io/kubernetes/test/e2e"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	"k8s.io/kubernetes/test/e2e/framework/testfiles"
	e2etestingmanifests "k8s.io/kubernetes/test/e2e/testing-manifests"
	testfixtures "k8s.io/kubernetes/test/fixtures"

	_ "k8s.io/kubernetes/test/e2e/feature"
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/e2e/network"
	_ "k8s.io/kubernetes/test/utils/format"
)

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	testfiles.AddFileSource(e2etestingmanifests.GetE2ETestingManifestsFS())
	testfiles.AddFileSource(testfixtures.GetTestFixturesFS())
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) { e2e.RunE2ETests(t) }
EOF
go mod tidy >&2
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

t0=$SECONDS
$NICE go build -trimpath -tags=selinux,notest -ldflags="$ldflags" -o "$work/agnhost-root/agnhost" \
  k8s.io/kubernetes/test/images/agnhost
log "agnhost built in $((SECONDS - t0)) s"

t0=$SECONDS
$NICE go test -c -vet=off -trimpath -tags=selinux,notest -ldflags="$ldflags" -o "$stage/e2e.test" ./lb
log "e2e.test $K8S_VERSION built in $((SECONDS - t0)) s"


# A one-layer OCI layout of directory $1 in $2, tagged $3, entrypoint $4 (a JSON list's items): sorted tar, owner
# 0:0, mtime 0, gzip -n — the same bytes on every build, like the pause image of scripts/node_binaries.sh.
pack_layout() {
  local from="$1" layout="$2" tag="$3" entrypoint="$4" arch config layer manifest
  mkdir -p "$layout/blobs/sha256"
  sha() { sha256sum "$1" | cut -d' ' -f1; }
  blob() { local d; d="$(sha "$1")"; cp "$1" "$layout/blobs/sha256/$d"; printf '%s' "$d"; }
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$from" -cf "$work/layer.tar" .
  gzip -n -6 -c "$work/layer.tar" >"$work/layer.tar.gz"
  arch="$(go env GOARCH)"
  printf '{"architecture":"%s","config":{"Entrypoint":[%s],"Env":["PATH=/bin:/usr/bin:/"],"WorkingDir":"/"},"os":"linux","rootfs":{"diff_ids":["sha256:%s"],"type":"layers"}}' \
    "$arch" "$entrypoint" "$(sha "$work/layer.tar")" >"$work/config.json"
  config="$(blob "$work/config.json")"
  layer="$(blob "$work/layer.tar.gz")"
  printf '{"config":{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.config.v1+json","size":%d},"layers":[{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","size":%d}],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}' \
    "$config" "$(stat -c %s "$work/config.json")" "$layer" "$(stat -c %s "$work/layer.tar.gz")" >"$work/manifest.json"
  manifest="$(blob "$work/manifest.json")"
  printf '{"manifests":[{"annotations":{"org.opencontainers.image.ref.name":"%s"},"digest":"sha256:%s","mediaType":"application/vnd.oci.image.manifest.v1+json","platform":{"architecture":"%s","os":"linux"},"size":%d}],"schemaVersion":2}' \
    "$tag" "$manifest" "$arch" "$(stat -c %s "$work/manifest.json")" >"$layout/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
}

# --- agnhost: busybox-static (Debian) gives the tests' `sh` and `wget` when installed.
t0=$SECONDS
root="$work/agnhost-root"
ln -s agnhost "$root/agnhost-2"
mkdir -p "$root/bin" "$root/tmp" "$root/uploads" && chmod 1777 "$root/tmp"
if [ -x /bin/busybox ]; then
  cp /bin/busybox "$root/bin/busybox"
  for applet in $(/bin/busybox --list); do [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"; done
else
  log "no /bin/busybox (Debian package busybox-static): agnhost has no sh/nc, tests that exec them will fail"
fi
# A dynamically linked host program with the libraries it links, at the same paths in the image.
copy_with_libs() {
  local program="$1" target="$2" lib
  mkdir -p "$root$(dirname "$target")" && rm -f "$root$target" && cp "$program" "$root$target"
  for lib in $(ldd "$program" | awk '/=> \// {print $3} /^\t\// {print $1}'); do
    mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
  done
}
# curl (the tests' `curl -q -s --max-time …` from pods) and OpenBSD's nc (`nc -v -t -w 2 host port`; busybox's nc has
# no -v/-t): the host's Debian curl and netcat-openbsd.
if command -v ldd >/dev/null && command -v curl >/dev/null; then
  copy_with_libs "$(command -v curl)" /usr/bin/curl
else
  log "no curl or ldd here (Debian packages curl, libc-bin): agnhost has no curl, tests that exec it will fail"
fi
# dash as /bin/sh: busybox's sh runs its own applets first, so `sh -c "nc …"` would never reach OpenBSD's nc.
if command -v ldd >/dev/null && [ -x /bin/dash ]; then copy_with_libs /bin/dash /bin/sh; fi
if command -v ldd >/dev/null && [ -x /bin/nc.openbsd ]; then
  copy_with_libs /bin/nc.openbsd /bin/nc
else
  log "no /bin/nc.openbsd (Debian package netcat-openbsd): agnhost has busybox's nc, which lacks -v and -t"
fi
pack_layout "$root" "$stage/agnhost-image" "$AGNHOST_TAG" '"/agnhost"'
log "agnhost $AGNHOST_TAG image packed in $((SECONDS - t0)) s"

# --- CoreDNS, the cluster DNS of the real cluster (the e2e tests reach Services by name): its own module, no replaces.
t0=$SECONDS
mkdir -p "$work/coredns-root"
GOBIN="$work/coredns-bin" $NICE go install -trimpath -ldflags="-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
cp "$work/coredns-bin/coredns" "$work/coredns-root/coredns"
pack_layout "$work/coredns-root" "$stage/coredns-image" "$COREDNS_VERSION" '"/coredns"'
log "coredns $COREDNS_VERSION built in $((SECONDS - t0)) s"

"$stage/e2e.test" --help >/dev/null 2>&1 || { log "the built e2e.test does not run"; exit 1; }

touch "$stage/.complete"
chmod 0755 "$stage"
rm -rf "$dest"
mv "$stage" "$dest"
log "e2e.test, agnhost and coredns in $dest after $((SECONDS - start)) s"
printf '%s\n' "$dest"
