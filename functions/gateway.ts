/** The gateway worker: every registered tool at POST /tools/:toolId. */
import { createGateway } from '../shared/http/app.ts';
import { tools } from './registry.ts';

export default createGateway(tools);
