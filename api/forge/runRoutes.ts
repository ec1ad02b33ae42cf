import type { CallerPrincipal } from '../../core/auth/principal';
import type { Config } from '../../core/config';
import { invalid, notFound } from '../../core/errors';
import { invalidCursor } from '../../core/paging';
import { decideRun } from '../../core/forge/decisionCommands';
import { planRun } from '../../core/forge/dryRun';
import { retryRun, startRun } from '../../core/forge/runCommands';
import { listLogs } from '../../core/forge/runLogStore';
import { findRun, listRuns, runStats, runStatus } from '../../core/forge/runStore';
import { DECISION_KINDS, RUN_STATUSES, type DecisionKind } from '../../core/forge/types';
import {
  keysetListQuery,
  shapeAForgePagination,
  shapeAQuery,
  shapeAWindow,
  shapeDPage,
  shapeDWindow,
} from '../http/pagination';
import { aggregateLimitedResponse } from '../http/aggregateReads';
import { defineRoute, linksTo, OtherSuccess } from '../http/route';
import { runLogFollowers } from './logFollowers';
import { openRunLogStream } from './logStream';
import { endOfStream } from '../http/eventStreams';
import { logPageSchema, runIdParams, runPageSchema, runPlanSchema, runSchema, statsSchema } from './schemas';

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

/**
 * Log pages: 100 lines by default, up to 1000. Lines are short and a run writes many (a script's
 * output up to its 1 MiB cap), so the spec's 20 per page would take dozens of calls to read one
 * run, while 1000 lines stay a response of a few hundred KiB at most.
 */
const LOG_PAGE = keysetListQuery(100, 1000);

/** A log line's id written as text (in a cursor, or as an event id): a positive integer. */
function lineId(text: string): number | undefined {
  const id = /^\d+$/.test(text) ? Number(text) : NaN;
  return Number.isSafeInteger(id) ? id : undefined;
}

/** Log cursors carry the last line's id. */
function afterLineId(afterId: string | null): number {
  if (afterId === null) return 0;
  const id = lineId(afterId);
  if (id === undefined) throw invalidCursor();
  return id;
}

/**
 * Where a followed log resumes: after the line whose id a reconnecting client sends back as
 * Last-Event-ID (EventSource does so by itself), or from the first line.
 */
function lastEventId(header: string): number {
  if (header === '') return 0;
  const id = lineId(header);
  if (id === undefined) {
    throw invalid('Invalid Last-Event-ID', [
      { field: 'headers.last-event-id', message: 'must be the id of a log line (an event id this stream sent)' },
    ]);
  }
  return id;
}

export const runRoutes = [
  defineRoute({
    method: 'POST',
    path: '/forge/runs',
    tag: 'Forge',
    access: 'forge:write',
    summary:
      "Start a run of a mold: parameters are checked against the mold's definitions. Over its tenant's running runs the run waits `pending` until one ends. With dry_run, only the plan: nothing starts",
    body: {
      type: 'object',
      required: ['mold_slug', 'parameters'],
      properties: {
        mold_slug: { type: 'string', minLength: 1 },
        parameters: { type: 'object' },
        dry_run: {
          type: 'boolean',
          default: false,
          description:
            'Check the parameters and answer the plan (200): each action as it would run, secrets masked; no run is stored or started',
        },
      },
      additionalProperties: false,
    },
    // No connection is held while Temporal starts the workflow (core/forge/runCommands.ts).
    transaction: 'on-demand',
    responses: {
      200: { description: 'dry_run: the plan of the run; nothing was stored or started', schema: runPlanSchema },
      201: {
        description: 'The run, created and started',
        schema: runSchema,
        links: linksTo(
          [
            'GET /forge/runs/{runId}',
            'GET /forge/runs/{runId}/logs',
            'POST /forge/runs/{runId}/approve',
            'POST /forge/runs/{runId}/reject',
            'POST /forge/runs/{runId}/cancel',
          ],
          { runId: '$response.body#/id' },
        ),
      },
      400: {
        description:
          'The body or the parameters are invalid, or the production_molds_need_approval policy refuses a run that targets a production entity without an approval first: nothing is created',
      },
      413: {
        description:
          'The parameters are larger, as JSON, than SHIPYARD_FORGE_PARAMETERS_MAX_BYTES (default 64 KiB): nothing is created',
      },
      429: {
        description:
          "The tenant started its limit of runs in the last minute (SHIPYARD_FORGE_RUN_STARTS_PER_MINUTE, default 30, or the tenant's own): Retry-After says when one more may start",
      },
      503: { description: 'The workflow could not be started: the run is marked failed' },
    },
    handler: async ({ auth, body, deps, ctx }) => {
      const request = { moldSlug: body.mold_slug, parameters: body.parameters as Record<string, unknown> };
      if (body.dry_run) return planRun(deps, auth, request);
      const run = await startRun(deps, auth, request);
      ctx.set('Location', `/api/v1/forge/runs/${run.id}`);
      return new OtherSuccess(201, { ...run, ...temporalLink(deps.config, auth, run.workflow_id) });
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
    responses: { 200: { description: '`{runs, pagination}` (shape A, forge form)', schema: runPageSchema } },
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
    summary:
      'A run: status, per-step statuses, parameters, decisions, who its approval still needs and, for platform operators, a Temporal UI link',
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
    summary:
      "The run's log lines in order, a page at a time; with follow=true, a server-sent event stream until the run ends",
    params: runIdParams,
    query: {
      type: 'object',
      properties: { follow: { type: 'boolean', default: false }, ...LOG_PAGE },
      additionalProperties: false,
    },
    // A stream outlives the request: it opens a short transaction per read.
    transaction: 'on-demand',
    responses: {
      200: {
        description:
          '`{lines, next_cursor}`. With follow=true instead `text/event-stream`: a `message` event per line ' +
          '(its id as the event id), then one `end` event `{status}` when the run has finished; ' +
          '`limit` and `cursor` do not apply. A client reconnecting with Last-Event-ID (the id of the last ' +
          'line it received, which EventSource sends by itself) resumes after that line. Each API process ' +
          'allows SHIPYARD_FORGE_LOG_STREAMS_PER_TENANT (default 20) open streams per tenant and ' +
          'SHIPYARD_FORGE_LOG_STREAMS_PER_USER (default 5) per user; one more is a 429 with Retry-After.',
        schema: logPageSchema,
        contentType: 'text/event-stream',
      },
      429: { description: 'The tenant or the user already holds its limit of open log streams' },
    },
    handler: async ({ auth, params, query, deps, ctx, inTenant }) => {
      const window = shapeDWindow(query);
      const afterId = afterLineId(window.afterId);
      if (!query.follow) {
        const rows = await inTenant(async (trx) => {
          if (!(await runStatus(trx, params.runId))) throw notFound('Run');
          // One more than asked: it only tells whether there is a next page.
          return listLogs(trx, params.runId, { afterId, limit: query.limit + 1 });
        });
        const page = shapeDPage(
          rows.map((line) => ({ id: String(line.id), item: line })),
          window,
        );
        return { lines: page.items, next_cursor: page.next_cursor };
      }
      const stream = await openRunLogStream(deps.db, runLogFollowers(deps.changes), {
        tenantId: auth.tenantId,
        userId: auth.userId,
        runId: params.runId,
        afterId: lastEventId(ctx.get('last-event-id')),
        closed: endOfStream(ctx.req, deps.stopping.signal),
        streamsPerTenant: deps.config.forge.logStreamsPerTenant,
        streamsPerUser: deps.config.limits.logStreamsPerUser,
      });
      if (!stream) throw notFound('Run');
      ctx.type = 'text/event-stream';
      ctx.set('Cache-Control', 'no-cache');
      ctx.req.socket.setTimeout(0);
      // The declared schema types the JSON form; the event stream is the documented alternative.
      return stream as unknown as { lines: []; next_cursor: string };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/stats',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'Runs by status, success rate, and per mold: outcomes and mean duration',
    responses: { 200: { description: 'Forge statistics', schema: statsSchema }, ...aggregateLimitedResponse },
    // An aggregate over every run: cached and bounded per tenant like the catalog's statistics.
    transaction: 'on-demand',
    handler: ({ auth, deps, inTenant }) => deps.aggregates.read(auth.tenantId, 'forge-runs', () => inTenant(runStats)),
  }),
  defineRoute({
    method: 'POST',
    path: '/forge/runs/{runId}/retry',
    tag: 'Forge',
    access: 'forge:write',
    summary:
      'Retry a failed run: a new run (retry_of) of the same mold version that skips the steps that completed and starts at the one that failed',
    params: runIdParams,
    body: {
      type: 'object',
      properties: {
        parameters: {
          type: 'object',
          description:
            "New values for parameters the remaining steps use, over the failed run's; checked as a start checks them",
        },
      },
      additionalProperties: false,
    },
    optionalBody: true,
    // No connection is held while Temporal starts the workflow.
    transaction: 'on-demand',
    responses: {
      201: {
        description: 'The new run, created and started (it waits `pending` for a slot like any run)',
        schema: runSchema,
        links: linksTo(['GET /forge/runs/{runId}'], { runId: '$response.body#/id' }),
      },
      400: {
        description:
          'The parameters are invalid, or name one no remaining step uses, or the production_molds_need_approval policy refuses the run',
      },
      409: { description: 'The run did not fail (or every step completed): audited as a failure' },
      413: { description: 'The parameters are larger, as JSON, than SHIPYARD_FORGE_PARAMETERS_MAX_BYTES' },
      429: { description: 'The tenant started its limit of runs in the last minute: Retry-After says when' },
      503: { description: 'The workflow could not be started: the new run is marked failed' },
    },
    handler: async ({ auth, params, body, deps, ctx }) => {
      const run = await retryRun(deps, auth, {
        runId: params.runId,
        parameters: body.parameters as Record<string, unknown> | undefined,
      });
      ctx.set('Location', `/api/v1/forge/runs/${run.id}`);
      return { ...run, ...temporalLink(deps.config, auth, run.workflow_id) };
    },
  }),
  ...DECISION_KINDS.map((decision) =>
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
      // No connection is held while Temporal takes the signal (core/forge/commands.ts).
      transaction: 'on-demand',
      responses: {
        200: { description: 'The run, with the decision recorded', schema: runSchema },
        403: {
          description:
            decision === 'cancel'
              ? 'The caller does not have the `forge:write` permission'
              : "The caller does not have the `forge:write` permission, is not among the step's approvers (its `approvers` rule; without one, any forge:write user) or started the run (unless the rule has allow_self_approval): audited as a failure",
        },
        409: {
          description:
            'The run is not in a state that takes this decision, or the caller already approved the step: audited as a failure',
        },
        503: { description: 'The signal could not be sent: the decision was not recorded' },
      },
      handler: async ({ auth, params, body, deps }) => {
        const run = await decideRun(deps, auth, { runId: params.runId, decision, comment: body.comment });
        return { ...run, ...temporalLink(deps.config, auth, run.workflow_id) };
      },
    }),
  ),
];
