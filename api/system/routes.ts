import { defineRoute } from '../http/route';
import { checkSystem } from './health';
import { systemHealthSchema } from './schemas';

export const systemRoutes = [
  defineRoute({
    method: 'GET',
    path: '/system',
    tag: 'Admin',
    access: 'admin:read',
    // The probes take up to seconds: no pooled connection is held meanwhile.
    transaction: 'on-demand',
    summary:
      'Status of the database, Elasticsearch, Temporal (with the Web UI address, for platform operators) and each worker pool',
    responses: { 200: { description: 'Every check, up or down, with its latency', schema: systemHealthSchema } },
    handler: ({ deps, auth }) => checkSystem(deps, auth.operator),
  }),
];
