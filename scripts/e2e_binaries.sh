#!/usr/bin/env bash
# Locate or build what the upstream LoadBalancer e2e run (tests/real/e2e_loadbalancer_test.ts) and the real
# two-node cluster's traffic tests (tests/real/real_cluster_test.ts) need:
#   e2e.test        Kubernetes' own e2e suite at $K8S_VERSION (scripts/versions.sh), `go test -c` of a wrapper package
#                   that imports k8s.io/kubernetes/test/e2e and its network tests (the `[Feature:LoadBalancer]` specs
#                   live there; the other suites are left out to halve the compile)
#   agnhost-image/  an OCI layout tagged as that version's e2e asks for agnhost (test/utils/image/manifest.go: 2.59 at
#                   v1.35, 2.66.1 at v1.37.2): the agnhost binary from k8s.io/kubernetes/test/images/agnhost (CGO off)
#                   plus, when Debian's busybox-static is installed, busybox's applets, the host's curl, GNU wget,
#                   dash and OpenBSD's nc with the libraries they link (the e2e tests exec `sh -c "... nc ..."`,
#                   `wget -T 5` and `curl` in agnhost pods)
#   coredns-image/  an OCI layout tagged $COREDNS_VERSION of CoreDNS (github.com/coredns/coredns), the cluster's DNS
# Prints the directory holding them on stdout (progress and timings go to stderr).
#
# Cached like every Go build of the tests (scripts/go_build.sh), in
# ${E2E_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ankra-cloud-ccm/e2e-binaries}/<key>. Builds run at `nice -n 10`
# (NICE= for normal priority). Needs Go 1.25+.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/go_build.sh"

K8S_VERSION="${K8S_VERSION:-$KUBERNETES_VERSION}"
RECIPE=8 # bump when the recipe below changes, so caches are rebuilt

log() { printf 'e2e-binaries: %s\n' "$*" >&2; }

has_all() {
  local dir="$1"
  [ -x "$dir/e2e.test" ] && [ -f "$dir/agnhost-image/index.json" ] && [ -f "$dir/coredns-image/index.json" ] &&
    [ -f "$dir/agnhost-tag" ]
}

command -v go >/dev/null || { log "go is not on PATH: install Go 1.25 or newer to build e2e.test and agnhost"; exit 1; }
key="k8s-${K8S_VERSION}_coredns-${COREDNS_VERSION}_r${RECIPE}_$(go_platform)"
dest="$(go_cache_root E2E_BIN_CACHE e2e-binaries)/$key"
if go_cached "$dest" has_all; then printf '%s\n' "$dest"; exit 0; fi
go_build_begin "$dest"

# --- the wrapper module (go_build.sh) and what this version's e2e framework asks for.
mkdir -p "$WORK/e2e/lb" && cd "$WORK/e2e"
kube_wrapper_module "$K8S_VERSION" k8s.io/kubernetes/test/images/agnhost
AGNHOST_TAG="$(sed -n 's/.*configs\[Agnhost\] = Config{[^,]*, "agnhost", "\([0-9.]*\)"}.*/\1/p' \
  "$KUBE_DIR/test/utils/image/manifest.go")"
[ -n "$AGNHOST_TAG" ] || { log "no agnhost tag in $KUBE_DIR/test/utils/image/manifest.go"; exit 1; }
printf '%s\n' "$AGNHOST_TAG" >"$STAGE/agnhost-tag"
# The output formatter upstream's test/e2e/e2e_test.go imports: test/utils/format until 1.36, then
# test/utils/ktesting/format (1.37 keeps only a test file in the old package).
format_package=test/utils/ktesting/format
[ -d "$KUBE_DIR/$format_package" ] || format_package=test/utils/format
log "e2e $K8S_VERSION: agnhost $AGNHOST_TAG, formatter $format_package"

# The suite's entry point: what upstream's test/e2e/e2e_test.go does (flags, embedded manifests, RunE2ETests), with
# only the network tests registered.
cat >"$WORK/e2e/lb/e2e_test.go" <<'EOF'
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
	_ "k8s.io/kubernetes/FORMAT_PACKAGE"
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
sed -i "s#FORMAT_PACKAGE#$format_package#" "$WORK/e2e/lb/e2e_test.go"
go mod tidy >&2

go_step "agnhost $AGNHOST_TAG (1 of 3)" $NICE go build -trimpath -tags=selinux,notest -ldflags="$KUBE_LDFLAGS" \
  -o "$WORK/agnhost-root/agnhost" k8s.io/kubernetes/test/images/agnhost

go_step "e2e.test $K8S_VERSION (2 of 3)" \
  $NICE go test -c -vet=off -trimpath -tags=selinux,notest -ldflags="$KUBE_LDFLAGS" -o "$STAGE/e2e.test" ./lb

# --- agnhost: busybox-static (Debian) gives the tests' `sh` and `wget` when installed.
t0=$SECONDS
root="$WORK/agnhost-root"
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
# GNU wget: Debian 12's busybox-static 1.35 wget dies of SIGSEGV when given a timeout (`wget -T 5 -qO- <ip>`, the
# source-ranges test's reachability check from pods; exit 139 on the host as in the pod), without one it works.
# Its /etc/wgetrc says `tries = 1`, as busybox's wget tries: GNU wget's default of 20 tries made each expected refusal
# (`wget -T 5` from a pod a source range drops) take 4 minutes.
if command -v ldd >/dev/null && command -v wget >/dev/null; then
  copy_with_libs "$(command -v wget)" /bin/wget
  mkdir -p "$root/etc" && printf 'tries = 1\n' >"$root/etc/wgetrc"
else
  log "no wget or ldd here (Debian package wget): agnhost has busybox's wget, whose -T crashes"
fi
# dash as /bin/sh: busybox's sh runs its own applets first, so `sh -c "nc …"` would never reach OpenBSD's nc.
if command -v ldd >/dev/null && [ -x /bin/dash ]; then copy_with_libs /bin/dash /bin/sh; fi
if command -v ldd >/dev/null && [ -x /bin/nc.openbsd ]; then
  copy_with_libs /bin/nc.openbsd /bin/nc
else
  log "no /bin/nc.openbsd (Debian package netcat-openbsd): agnhost has busybox's nc, which lacks -v and -t"
fi
pack_oci_layout "$root" "$STAGE/agnhost-image" "$AGNHOST_TAG" \
  '"Entrypoint":["/agnhost"],"Env":["PATH=/bin:/usr/bin:/"],"WorkingDir":"/"'
log "agnhost $AGNHOST_TAG image packed in $((SECONDS - t0)) s"

# --- CoreDNS, the cluster DNS of the real cluster (the e2e tests reach Services by name): its own module, no replaces.
t0=$SECONDS
mkdir -p "$WORK/coredns-root"
GOBIN="$WORK/coredns-bin" go_step "coredns $COREDNS_VERSION (3 of 3)" \
  $NICE go install -trimpath -ldflags="-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
cp "$WORK/coredns-bin/coredns" "$WORK/coredns-root/coredns"
pack_oci_layout "$WORK/coredns-root" "$STAGE/coredns-image" "$COREDNS_VERSION" \
  '"Entrypoint":["/coredns"],"Env":["PATH=/bin:/usr/bin:/"],"WorkingDir":"/"'
log "coredns $COREDNS_VERSION built in $((SECONDS - t0)) s"

"$STAGE/e2e.test" --help >/dev/null 2>&1 || { log "the built e2e.test does not run"; exit 1; }
go_build_end "$dest" "e2e.test, agnhost and coredns"
