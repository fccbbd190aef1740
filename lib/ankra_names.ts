/**
 * Every name this controller puts on, or reads from, Kubernetes objects and Ankra Cloud resources, declared once: the
 * prefixes of its annotations and labels, the Service annotations it records, the Ready condition's type, the labels
 * of the load balancers it owns, the label that leaves a node alone and the topology labels it writes on nodes. A
 * leaf: `kube/` (the slim copies, the writes) and `provider/` (the rules, the plans) import it alike, and the
 * migration from the Go controller depends on every value staying as it is.
 *
 * @module
 */

/** Prefix of the Service annotations users write (`load-balancer.ankra.cloud/<name>`, lib/provider/service/annotations.ts). */
export const ANNOTATION_PREFIX = "load-balancer.ankra.cloud/";

/** Prefix of what the controller itself records: its Service annotations and the labels of its load balancers. */
const CONTROLLER_PREFIX = "ccm.ankra.cloud/";

/** Prefix of the node labels an operator sets for this controller. */
const NODE_PREFIX = "node.ankra.cloud/";

/**
 * The domain of the node labels copied from server labels (`--node-labels-from-server`): a server label `<key>` is
 * the node label `server.ankra.cloud/<key>`, one `<prefix>/<name>` is `<prefix>.server.ankra.cloud/<name>`. Every
 * node label under this domain (or a subdomain of it) is the controller's while the flag is set.
 */
export const SERVER_LABEL_DOMAIN = "server.ankra.cloud";

/** The Service status condition this controller writes (`kubectl wait --for=condition=…`). */
export const READY_CONDITION_TYPE = `${ANNOTATION_PREFIX}Ready`;

/** Annotation in which the controller records the edge holding a Service's members. */
export const EDGE_IN_USE_ANNOTATION = `${CONTROLLER_PREFIX}edge`;

/** Annotation in which the controller records the shared load balancer holding a Service's listeners (`<key>`). */
export const SHARE_IN_USE_ANNOTATION = `${CONTROLLER_PREFIX}share`;

/** Load balancer label naming its Service (`<namespace>/<name>`). */
export const SERVICE_LABEL = `${CONTROLLER_PREFIX}service`;

/** Load balancer label naming its cluster (`--cluster-name`). */
export const CLUSTER_LABEL = `${CONTROLLER_PREFIX}cluster`;

/**
 * Load balancer label with the UID of its cluster's `kube-system` namespace: tells two clusters with the same
 * `--cluster-name` apart. Load balancers made by the Go controller (or an older version) lack it.
 */
export const CLUSTER_UID_LABEL = `${CONTROLLER_PREFIX}cluster-uid`;

/**
 * Label of a load balancer a Service let go with `preserve-on-delete` (instead of the Service label): `<namespace>.<name>`
 * of that Service. Never swept, never adopted by name; a Service naming it in `load-balancer-id` takes it back.
 */
export const RELEASED_LABEL = `${CONTROLLER_PREFIX}released`;

/**
 * Label of a load balancer several Services share (`share`), instead of the Service label: `<namespace>.<key>`. The
 * load balancer is the group's: it goes when its last Service leaves.
 */
export const SHARED_LABEL = `${CONTROLLER_PREFIX}shared`;

/**
 * Label of the load balancer of a share group across namespaces: the namespaces whose Services are on it
 * (comma-separated, in the order they joined, as many as fit in a label value). Only the controller writes it, so it
 * — not a Service's own annotations — says who was there first when two namespaces no longer allow each other.
 */
export const SHARED_NAMESPACES_LABEL = `${CONTROLLER_PREFIX}shared-namespaces`;

/** Label of the doctor's operate probe (a load balancer it creates and deletes at once). */
export const DOCTOR_PROBE_LABEL = `${CONTROLLER_PREFIX}doctor-probe`;

/** Node label that marks a node as no Ankra server (`false`): never looked up, tainted, deleted or made a member. */
export const MANAGED_LABEL = `${NODE_PREFIX}managed`;

/** The node label of its zone, which the cloud-node controller writes and the service controller reads. */
export const ZONE_LABEL = "topology.kubernetes.io/zone";

/** The node label of its region, which the cloud-node controller writes. */
export const REGION_LABEL = "topology.kubernetes.io/region";

/**
 * The `spec.loadBalancerClass` of a Service served on its nodes' own public addresses (node-address mode: no Ankra
 * load balancer). Always handled, whatever `--load-balancer-class` and `--require-load-balancer-class` say.
 */
export const NODE_ADDRESSES_CLASS = "ankra.cloud/node-addresses";
