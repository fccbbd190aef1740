#!/usr/bin/env bash
# What the README's two commands need on a Debian machine, in one table: checked, or installed.
#
#   bash scripts/prerequisites.sh demo               check what `deno task demo` needs; exit 1 naming the command
#                                                    that installs what is missing
#   bash scripts/prerequisites.sh tests              the same for `deno task test` (a superset of the demo's)
#   sudo bash scripts/prerequisites.sh --install demo|tests
#                                                    install what is missing with apt-get (root), as .ci/run does
#
# Both also install the pinned Deno outside the clone (scripts/deno.sh; from the npm registry) when missing. Go 1.25+
# and Node.js/npm are not Debian packages of the right version: when missing, the script says where to get them.
# Prints one line per missing part and what to run; prints nothing else when all is there (`-v`: every part).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

install=false
verbose=false
purpose=""
for arg in "$@"; do
  case "$arg" in
    --install) install=true ;;
    -v) verbose=true ;;
    demo | tests) purpose="$arg" ;;
    *) echo "prerequisites.sh: unknown argument $arg (usage: prerequisites.sh [--install] [-v] demo|tests)" >&2; exit 2 ;;
  esac
done
[ -n "$purpose" ] || { echo "prerequisites.sh: say what for: demo or tests" >&2; exit 2; }

libc_a() { [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f /usr/lib/aarch64-linux-gnu/libc.a ]; }
# On PATH, or in an sbin folder a user's PATH may leave out (Debian puts haproxy in /usr/sbin). PREREQUISITES_SBIN_DIRS
# replaces that list (a test makes a machine without haproxy with an empty one and a PATH of its own).
sbin_dirs="${PREREQUISITES_SBIN_DIRS-/usr/sbin /sbin /usr/local/sbin}"
have() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local d
  for d in $sbin_dirs; do [ -x "$d/$1" ] && return 0; done
  return 1
}

# part | Debian package | who needs it | the check (a shell condition) | why
# "demo" parts are needed by both commands; "tests" parts by the test command alone.
TABLE=(
  "openssl|openssl|demo|have openssl|the control plane's certificates"
  "haproxy|haproxy|demo|have haproxy|the simulator's load balancers (one HAProxy per load balancer, as Ankra runs)"
  "curl|curl|tests|have curl|the image and chart tests"
  "skopeo|skopeo|tests|have skopeo|pushing, pulling and unpacking the image"
  "umoci|umoci|tests|have umoci|unpacking the image"
  "runc|runc|tests|have runc|running the image and the real nodes' containers"
  "qemu-aarch64|qemu-user|tests|have qemu-aarch64|running the arm64 image"
  "systemd-analyze|systemd|tests|have systemd-analyze|checking the shipped systemd unit"
  "strace|strace|tests|have strace|tracing the release's system calls"
  "iptables|iptables|tests|have iptables|kube-proxy and the kubelet on the real nodes"
  "gcc|gcc|tests|have gcc|the pause image of the real nodes"
  "libc.a|libc6-dev|tests|libc_a|linking the pause image statically"
  "prometheus|prometheus|tests|have prometheus|scraping the release's metrics"
  "bridge CNI plugin|containernetworking-plugins|tests|[ -x /usr/lib/cni/bridge ]|the real cluster's pod network"
  "nsenter|util-linux|tests|have nsenter|starting processes in the real cluster's namespaces"
  "busybox|busybox-static|tests|[ -x /bin/busybox ]|the e2e test image's applets"
  "nc.openbsd|netcat-openbsd|tests|[ -x /bin/nc.openbsd ]|the e2e test image's nc"
  "wget|wget|tests|have wget|the e2e test image's wget (busybox's wget -T crashes)"
  "mmdebstrap|mmdebstrap|tests|have mmdebstrap|the Debian root the shipped unit boots in"
)

missing_packages=()
missing_lines=()
for row in "${TABLE[@]}"; do
  IFS='|' read -r part package who check why <<<"$row"
  [ "$purpose" = tests ] || [ "$who" = demo ] || continue
  if eval "$check"; then
    $verbose && echo "prerequisites: $part ✓"
  else
    missing_packages+=("$package")
    missing_lines+=("  $part (Debian package $package): $why")
  fi
done
# systemd-nspawn comes pinned to the host's systemd: a newer systemd-container would upgrade systemd itself.
if [ "$purpose" = tests ] && ! have systemd-nspawn && have dpkg-query; then
  missing_packages+=("systemd-container=$(dpkg-query -W -f='${Version}' systemd)")
  missing_lines+=("  systemd-nspawn (Debian package systemd-container, the host systemd's version): booting the shipped unit")
fi

problems=()
have go || problems+=("  go: Go 1.25 or newer is not on PATH (Debian's golang is too old): install it from https://go.dev/dl/")
have npm || problems+=("  npm: Node.js and npm are not on PATH (they install Deno): apt-get install nodejs npm, or from nodejs.org")

if [ "${#missing_packages[@]}" -gt 0 ]; then
  if $install; then
    [ "$(id -u)" = 0 ] || { echo "prerequisites.sh: --install needs root (sudo)" >&2; exit 1; }
    started=$SECONDS
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_packages[@]}" >/dev/null
    echo "prerequisites: installed ${missing_packages[*]} in $((SECONDS - started)) s"
  else
    problems+=("${missing_lines[@]}")
    problems+=("  install them: sudo apt-get install -y --no-install-recommends ${missing_packages[*]}")
    problems+=("  (or: sudo bash scripts/prerequisites.sh --install $purpose)")
  fi
fi
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'prerequisites: the %s command needs what this machine lacks:\n' "$purpose" >&2
  printf '%s\n' "${problems[@]}" >&2
  exit 1
fi
# The pinned Deno (outside the clone), from the npm registry, once.
bash "$here/deno.sh" >/dev/null
$verbose && echo "prerequisites: deno $("$(bash "$here/deno.sh")" --version | sed -n 1p | cut -d' ' -f2) ✓"
exit 0
