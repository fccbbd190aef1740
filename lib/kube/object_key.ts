/**
 * The one way an object is named in stores, work queues, Ankra labels and logs: `<namespace>/<name>` for a
 * namespaced object, the bare name for a cluster-scoped one (a Node).
 *
 * @module
 */

/** `<namespace>/<name>`, or `<name>` when the object has no namespace. */
export function objectKey(object: { namespace?: string; name: string }): string {
  return object.namespace ? `${object.namespace}/${object.name}` : object.name;
}
