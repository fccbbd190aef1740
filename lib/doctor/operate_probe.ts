/**
 * The operate probe: the doctor's one request that is not a read, sent only when the setup needs a token that may
 * operate (`setup_needs.ts`), and what it got ({@linkcode ProbeOutcome}).
 *
 * The Ankra Cloud API has no route that tells a token its own scope, so write permission shows only as the answer to
 * a write: a `create_load_balancer` the API must refuse — its zone does not exist and its `network_id` is empty, two
 * independent reasons, either of which stops a create — with a body that is otherwise well-formed, so it gets past
 * what the API checks before the zone: the token (401), its scope (403 for a read-only token), the body's shape (400),
 * the billing gates of a billable create (403 `email_unverified`, 402 `payment_method_required`,
 * `owner_approval_required`, `account_suspended`), then the zone (404) and the network (400). That is the simulator's
 * order (`simulator/operation_route.ts`, `simulator/routes/load_balancers.ts`, `simulator/load_balancers.ts`). Where
 * an API checks in another order, an answer can say less (a 404 or 400 then does not prove the billing gates pass),
 * never something false about the scope: a 403 without `email_unverified` is the read-only answer. It asks for the
 * cheapest kind (`public_ipv4: false`, `high_availability: false`) and carries a label naming it.
 *
 * @module
 */
import { DOCTOR_PROBE_LABEL } from "../ankra_names.ts";
import type { CreateLoadBalancerInput } from "../cloud/load_balancers.ts";
import type { ReadFailure } from "./fetched.ts";

/** The zone of the operate probe: a name no Ankra zone has (zones are named like `de-fsn1`). */
const OPERATE_PROBE_ZONE = "ankra-cloud-ccm-doctor-no-such-zone";

/** The operate probe's body: well-formed, refused for its zone and its empty network. */
export const OPERATE_PROBE: CreateLoadBalancerInput = {
  zone: OPERATE_PROBE_ZONE,
  name: "ankra-cloud-ccm-doctor-probe",
  network_id: "",
  labels: { [DOCTOR_PROBE_LABEL]: "true" },
  high_availability: false,
  public_ipv4: false,
};

/** What the probe got: refused (the expected outcome) with the API's answer, or — never expected — created. */
export type ProbeOutcome =
  | { created: false; failure: ReadFailure }
  | { created: true; loadBalancerId: string };
