/**
 * The entry of a per-tool worker. `npm run deploy -- <tool-id>` aliases the module
 * 'edge-tools-selected-tool' to that tool's file, so the bundle holds that tool only. It serves
 * `POST /` (the tool) and health: shared/http/tool-app.ts.
 */
import { createToolApp } from '../shared/http/tool-app.ts';
import { workerModule } from '../shared/runtime/worker.ts';
import tool from 'edge-tools-selected-tool';

export default workerModule(createToolApp(tool));
