/** The gateway worker: every registered tool at POST /tools/:toolId, and retention on its Cron Trigger. */
import { createGateway } from '../shared/http/app.ts';
import { workerModule } from '../shared/runtime/worker.ts';
import { tools } from './registry.ts';

export default workerModule(createGateway(tools));
