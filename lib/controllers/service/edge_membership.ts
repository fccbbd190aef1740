/**
 * Leaving a combined edge: a Service's members are removed from the edge it no longer uses (the rest of the edge's
 * members stay as they are), then the edge is forgotten in the Service's `ccm.ankra.cloud/edge` annotation. Used when a
 * Service moves to another edge or to a dedicated load balancer ({@linkcode ServiceEdge}'s caller) and when it is
 * deleted ({@linkcode ServiceCleanup}).
 *
 * @module
 */
import type { AnkraCloudClient } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import { isAnkraId } from "../../cloud/ids.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { edgeMembersWithout } from "../../provider/service/edge_plan.ts";
import { edgeMemberPrefix } from "../../provider/service/load_balancer_names.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";

/** What leaving an edge uses. */
export interface EdgeMembershipOptions {
  /** Reads the edge (its members). */
  cloud: Pick<AnkraCloudClient, "getEdge">;
  /** Sends (or, in a dry run, describes) the member update. */
  send: CloudCallSender;
  /** Forgets the edge in the Service's annotation. */
  writes: ServiceWriter;
  /** `--cluster-name`: part of the names of this cluster's members on an edge. */
  clusterName: string;
  /** The cluster's UID: part of the names of its members on an edge. */
  clusterUid: string;
}

/** Takes Services' members off edges. */
export class EdgeMembership {
  readonly #o: EdgeMembershipOptions;

  /** Keeps only `options`: the edge's members are read afresh on every {@linkcode EdgeMembership.leave}. */
  constructor(options: EdgeMembershipOptions) {
    this.#o = options;
  }

  /**
   * Removes the Service's members from an edge it no longer uses, then forgets that edge. A recorded edge that is not
   * an Ankra Cloud id (the annotation was edited by hand) cannot hold members of ours: it is forgotten, unasked.
   */
  async leave(service: SlimService, edgeId: string): Promise<void> {
    const key = objectKey(service);
    if (isAnkraId(edgeId)) await this.#removeMembers(service, key, edgeId);
    else {
      log.warn("the Service's recorded edge is not an Ankra Cloud id; it is forgotten without a request", {
        service: key,
        annotation: EDGE_IN_USE_ANNOTATION,
      });
    }
    if (!service.deletionTimestamp) await this.#o.writes.recordEdge(service, null);
  }

  async #removeMembers(service: SlimService, key: string, edgeId: string): Promise<void> {
    const o = this.#o;
    try {
      const edge = await o.cloud.getEdge(edgeId);
      const rest = edgeMembersWithout(edge, [
        edgeMemberPrefix(o.clusterName, service.namespace, service.name, o.clusterUid),
        edgeMemberPrefix(o.clusterName, service.namespace, service.name),
      ]);
      if (rest) {
        await o.send(key, [{ operation: "update_edge", edgeId, body: { members: rest } }]);
        if (!o.writes.dryRun) {
          log.info(1, "removed the Service's members from its former edge", { service: key, edge: edgeId });
        }
      }
    } catch (cause) {
      if (!isNotFound(cause)) throw cause;
    }
  }
}
