/**
 * `cloudflare:workers` for the tests that run in Node (the unit project): the OAuth provider library
 * imports `WorkerEntrypoint` from it only to recognise handler classes, which Node-side tests never pass.
 */
export class WorkerEntrypoint {}
