/**
 * The sandbox worker: runs code mode's agent code for the gateway, each execution in a worker it
 * loads through its Worker Loader binding (shared/codemode/sandbox-worker.ts). Deployed by
 * `npm run deploy -- --all` from wrangler.sandbox.toml; the gateway reaches it through its
 * `SANDBOX` service binding, locally through the sandbox host (local/sandbox-host.ts).
 */
import { createSandboxWorker } from '../shared/codemode/sandbox-worker.ts';

export default createSandboxWorker();
