import { randomUUID } from 'node:crypto';
import type { CallerPrincipal } from '../../core/auth/principal';
import type { Config } from '../../core/config';
import { actorOf, recordAudit, RefusedAction } from '../../core/audit/store';
import { ApiError, invalid, notFound } from '../../core/errors';
import { shapeAQuery, shapeAWindow, shapeAForgePagination } from '../http/pagination';
import { defineRoute } from '../http/route';
import { TASK_QUEUES } from '../../core/taskQueues';
import { forgeWorkflowId, RUN_STATUSES, type DecisionKind, type RunStepSpec } from '../../core/forge/types';
import type { forgeRun } from '../../workflows/forgeRun';
import { decisionConflict } from '../../core/forge/decisionRules';
import { checkRunParameters } from '../../core/forge/moldRules';
import { findMold } from '../../core/forge/moldStore';
import { streamRunLogs } from './logStream';
import {
  findRun,
  insertDecision,
  insertRun,
  listLogs,
  listRuns,
  lockRunForDecision,
  runStats,
  runStatus,
} from '../../core/forge/runStore';
import { runSchema } from './schemas';

const runIdParams = {
  type: 'object',
  required: ['runId'],
  properties: { runId: { type: 'string', format: 'uuid' } },
} as const;

/** The Temporal Web UI shows every tenant's runs, so only platform operators get a link to it. */
const temporalLink = (config: Config, auth: CallerPrincipal, workflowId: string) =>
  auth.operator
    ? {
        temporal_ui_url: `${config.temporal.uiUrl}/namespaces/${encodeURIComponent(config.temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`,
      }
    : {};

const DECISION_SUMMARIES: Record<DecisionKind, string> = {
  approve: 'Approve the step a run waits on: it resumes',
  reject: 'Reject the step a run waits on: the run ends as failed (rejected)',
  cancel: 'Cancel a run, stopping the action in flight: it ends as cancelled',
};

const decisionEvent = (decision: DecisionKind, runId: string) => ({
  eventType: `forge.run.${decision}`,
  action: decision,
  targetType: 'run',
  targetId: runId,
});

/** A 409 naming the run's status, audited as a failed decision. */
const decisionRefused = (decision: DecisionKind, runId: string, message: string, status: string) =>
  new RefusedAction(
    new ApiError('CONFLICT', message, [{ field: 'status', message: status }]),
    decisionEvent(decision, runId),
  );

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
    responses: { 201: { description: 'The run, created and started', schema: runSchema } },
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
      await recordAudit(db, auth, {
        eventType: 'forge.run.started',
        action: 'start',
        targetType: 'run',
        targetId: id,
        metadata: { mold: mold.slug },
      });
      ctx.set('Location', `/api/v1/forge/runs/${id}`);
      return { ...run, ...temporalLink(deps.config, auth, workflowId) };
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
      properties: {
        mold_slug: { type: 'string' },
        status: { type: 'string', enum: RUN_STATUSES },
        ...shapeAQuery(),
      },
      additionalProperties: false,
    },
    responses: { 200: { description: '`{runs, pagination}`' } },
    handler: async ({ db, query }) => {
      const window = shapeAWindow(query);
      const { runs, total } = await listRuns(db, { moldSlug: query.mold_slug, status: query.status }, window);
      return { runs, pagination: shapeAForgePagination(window, total) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/runs/{runId}',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'A run: status, per-step statuses, parameters, decisions and, for platform operators, a Temporal UI link',
    params: runIdParams,
    responses: { 200: { description: 'The run', schema: runSchema } },
    handler: async ({ db, auth, params, deps }) => {
      const run = await findRun(db, params.runId);
      if (!run) throw notFound('Run');
      return { ...run, ...temporalLink(deps.config, auth, run.workflow_id) };
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
  ...(Object.keys(DECISION_SUMMARIES) as DecisionKind[]).map((decision) =>
    defineRoute({
      method: 'POST',
      path: `/forge/runs/{runId}/${decision}`,
      tag: 'Forge',
      access: 'forge:write',
      summary: DECISION_SUMMARIES[decision],
      params: runIdParams,
      body: {
        type: 'object',
        properties: { comment: { type: 'string', maxLength: 2000 } },
        additionalProperties: false,
      },
      optionalBody: true,
      responses: { 200: { description: 'The run, with the decision recorded' } },
      handler: async ({ db, auth, params, body, deps }) => {
        const run = await lockRunForDecision(db, params.runId);
        if (!run) throw notFound('Run');
        const refusal = decisionConflict(decision, run);
        if (refusal) throw decisionRefused(decision, params.runId, refusal, run.status);
        // An approve or reject answers the step waiting now, never a later one.
        const position = decision === 'cancel' ? null : run.awaitingPosition;
        const { actor } = actorOf(auth);
        const recorded = await insertDecision(db, {
          tenantId: auth.tenantId,
          runId: params.runId,
          kind: decision,
          position,
          actor,
          comment: body.comment,
        });
        if (!recorded)
          throw decisionRefused(
            decision,
            params.runId,
            `Cannot ${decision} a run that is ${run.status}: it was already decided`,
            run.status,
          );
        await deps.temporal.workflow
          .getHandle(run.workflowId)
          .signal(decision, { actor, comment: body.comment, ...(position !== null && { position }) });
        await recordAudit(db, auth, {
          ...decisionEvent(decision, params.runId),
          metadata: { ...(position !== null && { step: position }), ...(body.comment && { comment: body.comment }) },
        });
        return findRun(db, params.runId);
      },
    }),
  ),
];
