import { randomUUID } from 'node:crypto';
import type { Config } from '../config';
import { actorOf, recordAudit } from '../audit/store';
import { ApiError, invalid, notFound } from '../http/errors';
import { cursorPageQuery, cursorPageWindow, forgePagination } from '../http/pagination';
import { defineRoute } from '../http/route';
import { TASK_QUEUES } from '../../workflows/taskQueues';
import { forgeWorkflowId, type RunStatus, type RunStepSpec } from '../../workflows/forgeTypes';
import type { forgeRun } from '../../workflows/forgeRun';
import { checkRunParameters } from './moldRules';
import { findMold } from './moldStore';
import { streamRunLogs } from './logStream';
import { findRun, insertDecision, insertRun, listLogs, listRuns, runStats, runStatus } from './runStore';
import { RUN_STATUSES } from './schemas';

const runIdParams = {
  type: 'object',
  required: ['runId'],
  properties: { runId: { type: 'string', format: 'uuid' } },
} as const;

const temporalLink = (config: Config, workflowId: string) =>
  `${config.temporal.uiUrl}/namespaces/${encodeURIComponent(config.temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;

/** Which states each decision may be taken in; anything else is a 409 naming the current one. */
const DECISIONS = {
  approve: { allowedFrom: ['awaiting_approval'], summary: 'Approve a run waiting for approval: it resumes' },
  reject: { allowedFrom: ['awaiting_approval'], summary: 'Reject a run waiting for approval: it ends as failed (rejected)' },
  cancel: { allowedFrom: ['pending', 'running', 'awaiting_approval'], summary: 'Cancel a run, stopping the action in flight: it ends as cancelled' },
} as const satisfies Record<string, { allowedFrom: RunStatus[]; summary: string }>;

export const runRoutes = [
  defineRoute({
    method: 'POST',
    path: '/forge/runs',
    tag: 'Forge',
    access: 'forge:write',
    summary: "Start a run of a mold: parameters are checked against the mold's definitions",
    body: {
      type: 'object',
      required: ['mold_slug', 'parameters'],
      properties: { mold_slug: { type: 'string', minLength: 1 }, parameters: { type: 'object' } },
      additionalProperties: false,
    },
    responses: { 201: { description: 'The run, created and started' } },
    handler: async ({ db, auth, body, deps, ctx }) => {
      const mold = await findMold(db, body.mold_slug);
      if (!mold) throw notFound('Mold');
      const { values, problems } = checkRunParameters(mold.parameters, body.parameters as Record<string, unknown>);
      if (problems.length) throw invalid('Invalid run parameters', problems);
      const steps: RunStepSpec[] = mold.actions.map((action, position) => ({
        position,
        name: action.name,
        type: action.type,
        config: (action.config ?? {}) as Record<string, unknown>,
        // A mold-wide approval gates the first action.
        requiresApproval: Boolean(action.requires_approval) || (position === 0 && mold.requires_approval),
      }));
      const id = randomUUID();
      const workflowId = forgeWorkflowId(id);
      const run = await insertRun(db, {
        id,
        tenantId: auth.tenantId,
        moldId: mold.id,
        moldSlug: mold.slug,
        moldVersion: mold.version,
        moldSnapshot: { parameters: mold.parameters, actions: mold.actions, requires_approval: mold.requires_approval },
        parameters: values,
        startedBy: actorOf(auth).actor,
        workflowId,
        steps,
      });
      // Started before this transaction commits; if starting fails, the run row rolls back.
      await deps.temporal.workflow.start<typeof forgeRun>('forgeRun', {
        taskQueue: TASK_QUEUES.forge,
        workflowId,
        args: [{ tenantId: auth.tenantId, runId: id, steps, parameters: values }],
      });
      await recordAudit(db, auth, { eventType: 'forge.run.started', action: 'start', targetType: 'run', targetId: id, metadata: { mold: mold.slug } });
      ctx.set('Location', `/api/v1/forge/runs/${id}`);
      return { ...run, temporal_ui_url: temporalLink(deps.config, workflowId) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/runs',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'List runs, newest first',
    query: {
      type: 'object',
      properties: { mold_slug: { type: 'string' }, status: { type: 'string', enum: RUN_STATUSES }, ...cursorPageQuery() },
      additionalProperties: false,
    },
    responses: { 200: { description: '`{runs, pagination}`' } },
    handler: async ({ db, query }) => {
      const window = cursorPageWindow(query);
      const { runs, total } = await listRuns(db, { moldSlug: query.mold_slug, status: query.status }, window);
      return { runs, pagination: forgePagination(window, total) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/runs/{runId}',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'A run: status, per-step statuses, parameters, decisions and a Temporal UI link',
    params: runIdParams,
    responses: { 200: { description: 'The run' } },
    handler: async ({ db, params, deps }) => {
      const run = await findRun(db, params.runId);
      if (!run) throw notFound('Run');
      return { ...run, temporal_ui_url: temporalLink(deps.config, run.workflow_id) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/runs/{runId}/logs',
    tag: 'Forge',
    access: 'forge:read',
    summary: "The run's log lines in order; with follow=true, a server-sent event stream until the run ends",
    params: runIdParams,
    query: { type: 'object', properties: { follow: { type: 'boolean', default: false } }, additionalProperties: false },
    responses: { 200: { description: '`{lines}`, or text/event-stream with follow=true' } },
    handler: async ({ db, auth, params, query, deps, ctx }) => {
      if (!(await runStatus(db, params.runId))) throw notFound('Run');
      if (!query.follow) return { lines: await listLogs(db, params.runId) };
      ctx.type = 'text/event-stream';
      ctx.set('Cache-Control', 'no-cache');
      ctx.req.socket.setTimeout(0);
      const closed = new Promise<void>((resolve) => ctx.req.once('close', () => resolve()));
      return streamRunLogs(deps.db, auth.tenantId, params.runId, closed);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/stats',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'Runs by status, success rate, and per mold: outcomes and mean duration',
    responses: { 200: { description: 'Forge statistics' } },
    handler: ({ db }) => runStats(db),
  }),
  ...(Object.keys(DECISIONS) as (keyof typeof DECISIONS)[]).map((decision) =>
    defineRoute({
      method: 'POST',
      path: `/forge/runs/{runId}/${decision}`,
      tag: 'Forge',
      access: 'forge:write',
      summary: DECISIONS[decision].summary,
      params: runIdParams,
      body: { type: 'object', properties: { comment: { type: 'string', maxLength: 2000 } }, additionalProperties: false },
      optionalBody: true,
      responses: { 200: { description: 'The run, with the decision recorded' } },
      handler: async ({ db, auth, params, body, deps }) => {
        const run = await db('runs').where({ id: params.runId }).forUpdate().first('status', 'workflow_id');
        if (!run) throw notFound('Run');
        if (!(DECISIONS[decision].allowedFrom as readonly string[]).includes(run.status)) {
          throw new ApiError('CONFLICT', `Cannot ${decision} a run that is ${run.status}`, [{ field: 'status', message: run.status }]);
        }
        const { actor } = actorOf(auth);
        await deps.temporal.workflow.getHandle(run.workflow_id).signal(decision, { actor, comment: body.comment });
        await insertDecision(db, auth.tenantId, params.runId, decision, actor, body.comment);
        await recordAudit(db, auth, { eventType: `forge.run.${decision}`, action: decision, targetType: 'run', targetId: params.runId });
        return findRun(db, params.runId);
      },
    }),
  ),
];
