#!/bin/sh
# Writes a least-privilege kubeconfig for ankra-cloud-ccm under systemd, instead of the cluster-admin one of k3s,
# RKE2 or kubeadm:
#
#   1. applies rbac.yaml (beside this script): the ServiceAccount kube-system/ankra-cloud-ccm with the Helm chart's
#      ClusterRole, its Role for the Lease kube-system/ankra-cloud-ccm and the bindings;
#   2. gets a token for that ServiceAccount:
#        --token-source=secret  (default) a kubernetes.io/service-account-token Secret kube-system/ankra-cloud-ccm-token;
#                               kube-controller-manager fills in a token that does not expire; rotate it by deleting
#                               the Secret and running this script again
#        --token-source=request a token from the TokenRequest API (`kubectl create token`) valid for --duration
#                               (default 8760h; the API server may cap it); run this script again before it expires
#   3. writes a kubeconfig (mode 0600) with the API server URL, the cluster CA and that token;
#   4. checks with `kubectl auth can-i` that the new kubeconfig may list nodes and may not read Secrets.
#
# Run it as root on a control-plane host, with kubectl and a cluster-admin kubeconfig:
#
#   sh write-kubeconfig.sh [--admin-kubeconfig FILE] [--output FILE] [--server URL]
#                          [--token-source secret|request] [--duration 8760h]
#
#   --admin-kubeconfig  default: $KUBECONFIG, else the first of /etc/rancher/k3s/k3s.yaml, /etc/rancher/rke2/rke2.yaml,
#                       /etc/kubernetes/admin.conf that exists, else kubectl's own default
#   --output            default: /etc/ankra-cloud-ccm/kubeconfig
#   --server            API server URL to write (default: the admin kubeconfig's, e.g. https://127.0.0.1:6443 on k3s,
#                       which reaches the API server of the host the file is used on)
#   KUBECTL             the kubectl to use (default: kubectl on PATH; on k3s `k3s kubectl` works too: KUBECTL="k3s kubectl")
#
# The token never appears on a command line. After writing a new kubeconfig: systemctl restart ankra-cloud-ccm.
set -eu

say() { printf 'write-kubeconfig: %s\n' "$*" >&2; }
fail() {
  say "$*"
  exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
admin=""
output=/etc/ankra-cloud-ccm/kubeconfig
server=""
source=secret
duration=8760h
rbac="$here/rbac.yaml"
namespace=kube-system
account=ankra-cloud-ccm
secret=ankra-cloud-ccm-token

while [ $# -gt 0 ]; do
  case "$1" in
    --admin-kubeconfig=*) admin=${1#*=} ;;
    --admin-kubeconfig) admin=${2:?--admin-kubeconfig needs a file}; shift ;;
    --output=*) output=${1#*=} ;;
    --output) output=${2:?--output needs a file}; shift ;;
    --server=*) server=${1#*=} ;;
    --server) server=${2:?--server needs a URL}; shift ;;
    --token-source=*) source=${1#*=} ;;
    --token-source) source=${2:?--token-source needs secret or request}; shift ;;
    --duration=*) duration=${1#*=} ;;
    --duration) duration=${2:?--duration needs a duration such as 8760h}; shift ;;
    --rbac=*) rbac=${1#*=} ;;
    --rbac) rbac=${2:?--rbac needs a file}; shift ;;
    -h | --help)
      sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) fail "unknown argument $1 (see --help)" ;;
  esac
  shift
done

case "$source" in
  secret | request) ;;
  *) fail "--token-source must be secret or request, not \"$source\"" ;;
esac
[ -r "$rbac" ] || fail "$rbac cannot be read: keep rbac.yaml beside this script or pass --rbac"

if [ -z "$admin" ] && [ -z "${KUBECONFIG:-}" ]; then
  for candidate in /etc/rancher/k3s/k3s.yaml /etc/rancher/rke2/rke2.yaml /etc/kubernetes/admin.conf; do
    if [ -r "$candidate" ]; then
      admin=$candidate
      break
    fi
  done
fi

# kubectl with the admin kubeconfig (or kubectl's own default).
admin_kubectl() {
  if [ -n "$admin" ]; then
    ${KUBECTL:-kubectl} --kubeconfig="$admin" "$@"
  else
    ${KUBECTL:-kubectl} "$@"
  fi
}

say "admin kubeconfig: ${admin:-${KUBECONFIG:-kubectl's default}}"
admin_kubectl auth can-i create clusterrolebindings.rbac.authorization.k8s.io >/dev/null 2>&1 ||
  fail "the admin kubeconfig may not create ClusterRoleBindings: use a cluster-admin kubeconfig (--admin-kubeconfig)"

if [ -z "$server" ]; then
  server=$(admin_kubectl config view --minify -o 'jsonpath={.clusters[0].cluster.server}')
fi
[ -n "$server" ] || fail "no API server URL in the admin kubeconfig: pass --server https://<host>:6443"
ca=$(admin_kubectl config view --raw --minify --flatten -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}')
[ -n "$ca" ] || fail "the admin kubeconfig names no cluster CA (certificate-authority or certificate-authority-data)"

say "applying $rbac (ServiceAccount $namespace/$account, ClusterRole system:ankra-cloud-ccm, Role for its Lease, bindings)"
admin_kubectl apply -f "$rbac" >/dev/null

if [ "$source" = secret ]; then
  say "token: Secret $namespace/$secret (kubernetes.io/service-account-token, does not expire)"
  admin_kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: $secret
  namespace: $namespace
  labels:
    app.kubernetes.io/name: ankra-cloud-ccm
    app.kubernetes.io/component: cloud-controller-manager
  annotations:
    kubernetes.io/service-account.name: $account
EOF
  encoded=""
  waited=0
  while [ -z "$encoded" ]; do
    encoded=$(admin_kubectl -n "$namespace" get secret "$secret" -o 'jsonpath={.data.token}')
    [ -n "$encoded" ] && break
    [ "$waited" -ge 60 ] && fail "the token of Secret $namespace/$secret was not filled in within 60 s: kube-controller-manager's token controller must be running (or use --token-source=request)"
    sleep 1
    waited=$((waited + 1))
  done
  token=$(printf '%s' "$encoded" | base64 -d)
else
  say "token: TokenRequest for $namespace/$account, valid for $duration"
  token=$(admin_kubectl -n "$namespace" create token "$account" --duration="$duration")
  # The expiry the API server granted (it may cap the duration): the JWT's exp claim.
  payload=$(printf '%s' "$token" | cut -d. -f2 | tr '_-' '/+')
  case $((${#payload} % 4)) in
    2) payload="$payload==" ;;
    3) payload="$payload=" ;;
  esac
  exp=$(printf '%s' "$payload" | base64 -d 2>/dev/null | sed -n 's/.*"exp":\([0-9]*\).*/\1/p')
  if [ -n "$exp" ]; then
    say "the token expires $(date -u -d "@$exp" '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo "at $exp (Unix time)"): run this script again before then"
  fi
fi
[ -n "$token" ] || fail "no token was issued for $namespace/$account"

dir=$(dirname "$output")
mkdir -p "$dir"
umask 077
tmp=$(mktemp "$dir/.kubeconfig.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: kubernetes
    cluster:
      server: $server
      certificate-authority-data: $ca
users:
  - name: $account
    user:
      token: $token
contexts:
  - name: $account
    context:
      cluster: kubernetes
      user: $account
      namespace: $namespace
current-context: $account
EOF
chmod 0600 "$tmp"
mv -f "$tmp" "$output"
trap - EXIT

# The new identity may do what the controller does, and no more.
k() { ${KUBECTL:-kubectl} --kubeconfig="$output" "$@"; }
k auth can-i list nodes >/dev/null 2>&1 ||
  fail "$output was written, but it may not list nodes: check the API server URL ($server) and the RBAC objects"
if k auth can-i get secrets -n "$namespace" >/dev/null 2>&1; then
  fail "$output may read Secrets in $namespace: the ServiceAccount has more rights than rbac.yaml gives; check its other bindings"
fi
say "wrote $output (mode 0600) for $server as system:serviceaccount:$namespace:$account"
case "$server" in
  https://127.* | https://localhost* | https://\[::1\]*)
    say "it points at this host's API server: use it here, or run the script on each control-plane host" ;;
esac
say "now: systemctl restart ankra-cloud-ccm (if it runs already)"
