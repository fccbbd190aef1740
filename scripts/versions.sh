# The versions the tests build and run, in one place (sourced by the scripts that build them; read by
# tests/support/control_plane/versions.ts). Every tier — the control plane, the real node and cluster, Kubernetes' e2e
# tests — runs KUBERNETES_VERSION; moving to the next minor is this one line (plus KUBERNETES_GOTOOLCHAIN when its
# go.mod asks for a newer Go than the machine's: 1.38 needs `go1.27.3`).
# shellcheck disable=SC2034
KUBERNETES_VERSION=v1.37.2
# The oldest minor this controller supports (README): the old-version tier runs the integration tests that need only
# an API server against its kube-apiserver.
KUBERNETES_OLDEST_VERSION=v1.33.13
# `local` builds with the machine's Go; a name such as go1.27.3 makes the go command fetch that toolchain.
KUBERNETES_GOTOOLCHAIN=local
ETCD_VERSION=v3.6.16
HELM_VERSION=v4.3.1
CONTAINERD_VERSION=v2.2.9
COREDNS_VERSION=v1.15.0
REGISTRY_VERSION=v3.1.2
