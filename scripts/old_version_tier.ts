/**
 * The old-version tier of the README's test command: the integration tests that need only a kube-apiserver, run a
 * second time against the oldest Kubernetes minor this controller supports (scripts/versions.sh
 * `KUBERNETES_OLDEST_VERSION`, 1.33). They cover every API the controller uses — Nodes and their status, Services and
 * their status (conditions, `ipMode`), EndpointSlices, Events, Leases, TokenReview and SubjectAccessReview,
 * SelfSubjectReview, the chart's RBAC and admission policy — through the controller's own client and its process.
 *
 * @module
 */

/** The files of the tier, relative to the repository. */
export const OLD_VERSION_TESTS: readonly string[] = [
  "tests/integration/kube_client_test.ts",
  "tests/integration/kube_events_test.ts",
  "tests/integration/node_initialisation_test.ts",
  "tests/integration/node_lifecycle_test.ts",
  "tests/integration/service_load_balancer_test.ts",
  "tests/integration/ready_condition_test.ts",
  "tests/integration/ip_mode_test.ts",
  "tests/integration/local_traffic_test.ts",
  "tests/integration/controller_process_test.ts",
  "tests/integration/metrics_auth_test.ts",
  "tests/integration/rbac_test.ts",
  "tests/integration/admission_policy_test.ts",
  "tests/integration/doctor_cluster_test.ts",
];
