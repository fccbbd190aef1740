/**
 * Leaving a combined edge: a Service's members are removed from the edge it no longer uses (the rest of the edge's
 * members stay as they are), then the edge is forgotten in the Service's `ccm.ankra.cloud/edge` annotation. Used when a
 * Service moves to another edge or to a dedicated load balancer ({@linkcode ServiceEdge}'s caller) and when it is
 * deleted ({@linkcode ServiceCleanup}).
 *
 * @module
 */
import { EDGE_IN_USE_ANNOTATION } from "../../ankra_names.ts";
import type { AnkraCloudClient } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import { isAnkraId } from "../../cloud/ids.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import { type SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { edgeMembersWithout } from "../../provider/service/edge_plan.ts";
import { edgeMemberPrefix } from "../../provider/service/load_balancer_names.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";

/** What leaving an edge uses. */
interface EdgeMembershipOptions {
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
  readonly #cloud: EdgeMembershipOptions["cloud"];
  readonly #send: EdgeMembershipOptions["send"];
  readonly #writes: EdgeMembershipOptions["writes"];
  readonly #clusterName: EdgeMembershipOptions["clusterName"];
  readonly #clusterUid: EdgeMembershipOptions["clusterUid"];

  /** Keeps only `options`: the edge's members are read afresh on every {@linkcode EdgeMembership.leave}. */
  constructor(options: EdgeMembershipOptions) {
    this.#cloud = options.cloud;
    this.#send = options.send;
    this.#writes = options.writes;
    this.#clusterName = options.clusterName;
    this.#clusterUid = options.clusterUid;
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
    if (!service.deletionTimestamp) await this.#writes.recordEdge(service, null);
  }

  async #removeMembers(service: SlimService, key: string, edgeId: string): Promise<void> {
    try {
      const edge = await this.#cloud.getEdge(edgeId);
      const rest = edgeMembersWithout(edge, [
        edgeMemberPrefix(this.#clusterName, service.namespace, service.name, this.#clusterUid),
        edgeMemberPrefix(this.#clusterName, service.namespace, service.name),
      ]);
      if (rest) {
        await this.#send(key, [{ operation: "update_edge", edgeId, body: { members: rest } }]);
        if (!this.#writes.dryRun) {
          log.info(1, "removed the Service's members from its former edge", { service: key, edge: edgeId });
        }
      }
    } catch (cause) {
      if (!isNotFound(cause)) throw cause;
    }
  }
}
