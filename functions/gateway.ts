/** The gateway worker: every registered tool at POST /tools/:toolId and over MCP (API keys or OAuth), and retention on its Cron Trigger. */
import { createGateway } from '../shared/http/app.ts';
import { withOAuth } from '../shared/http/oauth.ts';
import { workerModule } from '../shared/runtime/worker.ts';
import { tools } from './registry.ts';

export default workerModule(withOAuth(createGateway(tools)));
