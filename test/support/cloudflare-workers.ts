/**
 * `cloudflare:workers` for the tests that run in Node (the unit project): the OAuth provider library
 * imports `WorkerEntrypoint` from it only to recognise handler classes, which Node-side tests never pass.
 */
export class WorkerEntrypoint {}
/** @cloudflare/codemode (code mode's type generation, loaded by the Node-side tests) imports these two only to define its own classes. */
export class DurableObject {}
export class RpcTarget {}
