/**
 * Reads a V8 heap snapshot (the `.heapsnapshot` JSON the inspector's `HeapProfiler.takeHeapSnapshot` streams) and
 * says where the memory is: each object's retained size (what collecting it would free: the sizes of everything it
 * alone keeps alive, from the dominator tree of the graph without weak edges, as Chrome's DevTools computes it), the
 * instances of named classes with the retained size of each of their fields, and the heap by constructor.
 *
 * Used by the memory benchmark (bench/memory_bench.ts) on a build that keeps class names (the release bundle is
 * minified: its classes are one letter).
 *
 * @module
 */

/** One instance of a class the caller named: its retained size and that of each field it alone keeps alive. */
export interface Instance {
  /** The class (constructor) name. */
  className: string;
  /** The string its label path led to (e.g. an informer's `#options.name`), when one was asked for and found. */
  label?: string;
  /** Bytes freed if the instance went. */
  retained: number;
  /**
   * The nearest named instance that alone keeps this one alive, else one holding it in a field (its index in
   * `instances`), if any.
   */
  owner?: number;
  /** Field name → bytes the field alone keeps alive (a field shared with another holder counts nothing). */
  fields: Map<string, number>;
}

/** What {@linkcode analyseHeapSnapshot} finds. */
export interface HeapAnalysis {
  /** The sum of every reachable object's own size (what V8 reports as used, give or take its bookkeeping). */
  reachableBytes: number;
  /** Reachable objects. */
  objects: number;
  /** Each instance of the classes asked about. */
  instances: Instance[];
  /** Own sizes by kind: a class name for objects, `(string)`, `(array)`, `(code)`, `(closure)`, … */
  byKind: Map<string, { count: number; bytes: number }>;
}

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Kinds grouped by node type rather than name (a string's name is its text). */
const GROUPED_TYPES = new Set([
  "string",
  "concatenated string",
  "sliced string",
  "code",
  "hidden",
  "array",
  "number",
  "regexp",
  "symbol",
  "bigint",
  "object shape",
]);

/**
 * Analyses the snapshot `text`, reporting every instance of the classes `classes` names with its fields; each class
 * may name a label path, the fields to follow from an instance to a string that tells its instances apart
 * (`["#options", "name"]`).
 *
 * `containers` names classes whose Map field holds objects that are theirs alone (a store's objects): references to
 * those objects from anywhere else (a list of them kept by a reader, a pass that holds one) count as weak, so each is
 * counted in its container and the holders of references are charged only for the references.
 */
export function analyseHeapSnapshot(
  text: string,
  classes: ReadonlyMap<string, readonly string[]>,
  containers: ReadonlyMap<string, string> = new Map(),
): HeapAnalysis {
  const parsed = JSON.parse(text) as Snapshot;
  const meta = parsed.snapshot.meta;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const typeField = meta.node_fields.indexOf("type");
  const nameField = meta.node_fields.indexOf("name");
  const sizeField = meta.node_fields.indexOf("self_size");
  const edgeCountField = meta.node_fields.indexOf("edge_count");
  const edgeTypeField = meta.edge_fields.indexOf("type");
  const edgeNameField = meta.edge_fields.indexOf("name_or_index");
  const edgeToField = meta.edge_fields.indexOf("to_node");
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weakEdge = edgeTypes.indexOf("weak");
  const namedEdges = new Set(["context", "property", "internal", "shortcut"].map((t) => edgeTypes.indexOf(t)));
  const { nodes, edges, strings } = parsed;
  const count = nodes.length / nodeFieldCount;

  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i] + nodes[i * nodeFieldCount + edgeCountField];
  const target = (edge: number) => edges[edge * edgeFieldCount + edgeToField] / nodeFieldCount;
  const edgeName = (edge: number) => strings[edges[edge * edgeFieldCount + edgeNameField]];
  const field = (node: number, name: string) => {
    for (let e = firstEdge[node]; e < firstEdge[node + 1]; e++) {
      if (namedEdges.has(edges[e * edgeFieldCount + edgeTypeField]) && edgeName(e) === name) return target(e);
    }
    return -1;
  };
  // The objects of each container's map, and the map's table that alone holds each.
  const heldBy = new Int32Array(count).fill(-1);
  const objectType = nodeTypes.indexOf("object");
  for (let node = 0; node < count; node++) {
    const base = node * nodeFieldCount;
    const mapField = containers.get(strings[nodes[base + nameField]]);
    if (nodes[base + typeField] !== objectType || mapField === undefined) continue;
    const map = field(node, mapField);
    const table = map < 0 ? -1 : field(map, "table");
    if (table < 0) continue;
    for (let e = firstEdge[table]; e < firstEdge[table + 1]; e++) {
      const held = target(e);
      if (nodes[held * nodeFieldCount + typeField] === objectType) heldBy[held] = table;
    }
  }
  const strong = (edge: number, from: number) => {
    if (edges[edge * edgeFieldCount + edgeTypeField] === weakEdge) return false;
    const holder = heldBy[target(edge)];
    return holder < 0 || holder === from;
  };

  // Depth-first from the root (node 0) over strong edges: postorder numbers.
  const order = new Int32Array(count).fill(-1);
  const byOrder = new Uint32Array(count);
  const visited = new Uint8Array(count);
  const stack = new Uint32Array(count);
  const cursor = new Uint32Array(count);
  let top = 0;
  let reached = 0;
  stack[top++] = 0;
  visited[0] = 1;
  cursor[0] = firstEdge[0];
  while (top > 0) {
    const node = stack[top - 1];
    if (cursor[node] < firstEdge[node + 1]) {
      const edge = cursor[node]++;
      if (!strong(edge, node)) continue;
      const next = target(edge);
      if (visited[next]) continue;
      visited[next] = 1;
      cursor[next] = firstEdge[next];
      stack[top++] = next;
    } else {
      top--;
      order[node] = reached;
      byOrder[reached++] = node;
    }
  }

  // Predecessors over strong edges, among reached nodes.
  const predCount = new Uint32Array(count + 1);
  for (let node = 0; node < count; node++) {
    if (order[node] < 0) continue;
    for (let e = firstEdge[node]; e < firstEdge[node + 1]; e++) if (strong(e, node)) predCount[target(e) + 1]++;
  }
  for (let i = 0; i < count; i++) predCount[i + 1] += predCount[i];
  const preds = new Uint32Array(predCount[count]);
  const fill = predCount.slice(0, count);
  for (let node = 0; node < count; node++) {
    if (order[node] < 0) continue;
    for (let e = firstEdge[node]; e < firstEdge[node + 1]; e++) if (strong(e, node)) preds[fill[target(e)]++] = node;
  }

  // Cooper, Harvey and Kennedy's iterative dominators, on postorder numbers.
  const idom = new Int32Array(reached).fill(-1);
  const rootOrder = order[0];
  idom[rootOrder] = rootOrder;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = idom[a];
      while (b < a) b = idom[b];
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let o = reached - 2; o >= 0; o--) {
      const node = byOrder[o];
      let chosen = -1;
      for (let p = predCount[node]; p < predCount[node + 1]; p++) {
        const po = order[preds[p]];
        if (idom[po] < 0) continue;
        chosen = chosen < 0 ? po : intersect(po, chosen);
      }
      if (chosen >= 0 && idom[o] !== chosen) {
        idom[o] = chosen;
        changed = true;
      }
    }
  }

  const retained = new Float64Array(reached);
  let reachableBytes = 0;
  for (let o = 0; o < reached; o++) {
    const size = nodes[byOrder[o] * nodeFieldCount + sizeField];
    retained[o] += size;
    reachableBytes += size;
    if (o !== rootOrder && idom[o] >= 0) retained[idom[o]] += retained[o];
  }

  const stringType = nodeTypes.indexOf("string");
  /** The string at the end of `path` from `node` (named edges), if there is one. */
  const labelOf = (node: number, path: readonly string[]): string | undefined => {
    if (path.length === 0) return undefined;
    let at = node;
    for (const step of path) if (at >= 0) at = field(at, step);
    return at >= 0 && nodes[at * nodeFieldCount + typeField] === stringType
      ? strings[nodes[at * nodeFieldCount + nameField]]
      : undefined;
  };

  const byKind = new Map<string, { count: number; bytes: number }>();
  const instances: Instance[] = [];
  const instanceAt = new Map<number, number>();
  for (let o = 0; o < reached; o++) {
    const node = byOrder[o];
    const base = node * nodeFieldCount;
    const type = nodeTypes[nodes[base + typeField]];
    const name = strings[nodes[base + nameField]];
    const kind = GROUPED_TYPES.has(type) ? `(${type})` : type === "closure" ? "(closure)" : name;
    const entry = byKind.get(kind) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += nodes[base + sizeField];
    byKind.set(kind, entry);
    if (type !== "object" || !classes.has(name)) continue;
    const fields = new Map<string, number>();
    for (let e = firstEdge[node]; e < firstEdge[node + 1]; e++) {
      const edgeType = edges[e * edgeFieldCount + edgeTypeField];
      if (!namedEdges.has(edgeType)) continue;
      const to = order[target(e)];
      if (to < 0 || idom[to] !== o) continue;
      const field = String(strings[edges[e * edgeFieldCount + edgeNameField]]);
      fields.set(field, (fields.get(field) ?? 0) + retained[to]);
    }
    const label = labelOf(node, classes.get(name)!);
    instanceAt.set(o, instances.length);
    instances.push({ className: name, ...(label === undefined ? {} : { label }), retained: retained[o], fields });
  }
  for (const [o, index] of instanceAt) {
    for (let up = idom[o]; up >= 0 && up !== rootOrder; up = idom[up]) {
      const owner = instanceAt.get(up);
      if (owner !== undefined) {
        instances[index].owner = owner;
        break;
      }
    }
    // Kept by several holders (a store is also held by its readers' closures): the named instance whose field it is.
    const node = byOrder[o];
    for (let p = predCount[node]; p < predCount[node + 1] && instances[index].owner === undefined; p++) {
      const holder = instanceAt.get(order[preds[p]]);
      if (holder !== undefined && holder !== index) instances[index].owner = holder;
    }
  }
  return { reachableBytes, objects: reached, instances, byKind };
}
