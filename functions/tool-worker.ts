/**
 * The entry of a per-tool worker. `npm run deploy -- <tool-id>` aliases the module
 * 'edge-tools-selected-tool' to that tool's file, so the bundle holds that tool only.
 */
import { createToolWorker } from '../shared/http/app.ts';
import { workerModule } from '../shared/runtime/worker.ts';
import tool from 'edge-tools-selected-tool';

export default workerModule(createToolWorker(tool));
