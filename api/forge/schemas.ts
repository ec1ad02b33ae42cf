import {
  ACTION_TYPES,
  DECISION_KINDS,
  LOG_LEVELS,
  moldActionSchema,
  moldParameterSchema,
  RUN_STATUSES,
  STEP_STATUSES,
  MOLD_HEADER_FIELDS,
  RUN_FIELDS,
} from '../../core/forge/types';
import { ENTITY_TYPES } from '../../core/catalog/types';

// Request and response shapes of the forge routes; a mold's own parts are in core/forge/types.

export const slugParams = {
  type: 'object',
  required: ['slug'],
  properties: { slug: { type: 'string', maxLength: 100 } },
} as const;

export const runIdParams = {
  type: 'object',
  required: ['runId'],
  properties: { runId: { type: 'string', format: 'uuid' } },
} as const;

/** Shape A, forge form (`shapeAForgePagination`). */
const shapeAForgePaginationSchema = {
  type: 'object',
  required: ['total_count', 'next_cursor', 'has_more'],
  properties: {
    total_count: { type: 'integer' },
    next_cursor: { type: 'string', description: "'' when there are no more" },
    has_more: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

/** `{ a: { type: 'integer' }, … }` for each of `keys`. */
const integerPer = <const K extends readonly string[]>(keys: K) =>
  Object.fromEntries(keys.map((key) => [key, { type: 'integer' }])) as { [P in K[number]]: { type: 'integer' } };

const TIMESTAMP = { type: 'string', format: 'date-time' } as const;
const OPTIONAL_TIMESTAMP = { type: ['string', 'null'], format: 'date-time' } as const;
/** Values a caller chose (run parameters, a step's output): any JSON, described by the mold. */
const FREE_OBJECT = { type: 'object', additionalProperties: true } as const;

const moldHeaderProperties = {
  id: { type: 'string', format: 'uuid' },
  slug: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  category: { type: ['string', 'null'] },
  icon: { type: ['string', 'null'] },
  published: { type: 'boolean' },
  version: { type: 'integer' },
  requires_approval: { type: 'boolean' },
  entity_types: { type: 'array', items: { type: 'string', enum: ENTITY_TYPES } },
  deploys: { type: 'boolean', description: 'Its completed runs are deployments (DORA metrics)' },
  created_by: { type: 'string' },
  created_at: TIMESTAMP,
  updated_at: TIMESTAMP,
} as const;

/** A whole mold: POST, GET, PUT of /forge/molds/{slug}, publish and unpublish. */
export const moldSchema = {
  type: 'object',
  required: [...MOLD_HEADER_FIELDS, 'parameters', 'actions'],
  properties: {
    ...moldHeaderProperties,
    parameters: { type: 'array', items: moldParameterSchema },
    actions: { type: 'array', items: moldActionSchema },
  },
  additionalProperties: false,
} as const;

/**
 * A mold in a list page: without its parameters and the actions' configs (a script's text, request
 * bodies), which can be large; GET /forge/molds/{slug} has them.
 */
export const moldSummarySchema = {
  type: 'object',
  required: [...MOLD_HEADER_FIELDS, 'parameter_count', 'actions'],
  properties: {
    ...moldHeaderProperties,
    parameter_count: { type: 'integer', minimum: 0 },
    actions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'type'],
        properties: { name: { type: 'string' }, type: { type: 'string', enum: ACTION_TYPES } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const moldPageSchema = {
  type: 'object',
  required: ['molds', 'pagination'],
  properties: { molds: { type: 'array', items: moldSummarySchema }, pagination: shapeAForgePaginationSchema },
  additionalProperties: false,
} as const;

const runProperties = {
  id: { type: 'string', format: 'uuid' },
  mold_slug: { type: 'string' },
  mold_version: { type: 'integer' },
  parameters: FREE_OBJECT,
  status: { type: 'string', enum: RUN_STATUSES },
  error: { type: ['string', 'null'] },
  started_by: { type: 'string' },
  workflow_id: { type: 'string' },
  retry_of: {
    type: ['string', 'null'],
    format: 'uuid',
    description: 'The failed run this one retries (POST /forge/runs/{runId}/retry)',
  },
  created_at: TIMESTAMP,
  started_at: OPTIONAL_TIMESTAMP,
  finished_at: OPTIONAL_TIMESTAMP,
} as const;

/** A run in GET /forge/runs: no steps, decisions or Temporal link. */
export const runSummarySchema = {
  type: 'object',
  required: RUN_FIELDS,
  properties: runProperties,
  additionalProperties: false,
} as const;

export const runStepSchema = {
  type: 'object',
  required: ['position', 'name', 'type', 'status', 'error', 'output', 'completed_in', 'started_at', 'finished_at'],
  properties: {
    position: { type: 'integer', minimum: 0 },
    name: { type: 'string' },
    type: { type: 'string', enum: ACTION_TYPES },
    status: { type: 'string', enum: STEP_STATUSES },
    error: { type: ['string', 'null'] },
    output: { description: "The action's result (api-call: {status, body, truncated}); null until it completes" },
    completed_in: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'A step a retry skipped (`skipped`): the run it completed in, where its output is',
    },
    started_at: OPTIONAL_TIMESTAMP,
    finished_at: OPTIONAL_TIMESTAMP,
  },
  additionalProperties: false,
} as const;

export const runDecisionSchema = {
  type: 'object',
  required: ['decision', 'step_position', 'actor', 'comment', 'satisfied_rule', 'created_at'],
  properties: {
    decision: { type: 'string', enum: DECISION_KINDS },
    step_position: { type: ['integer', 'null'], description: 'The approval step an approve or reject answered' },
    actor: { type: 'string' },
    comment: { type: ['string', 'null'] },
    satisfied_rule: {
      type: ['string', 'null'],
      description:
        "An approve or reject: the part of the step's approver rule the actor satisfied (`team:<slug>`, `role:<key>`, `user:<email>`, or `forge:write` without a rule)",
    },
    created_at: TIMESTAMP,
  },
  additionalProperties: false,
} as const;

const stringList = { type: 'array', items: { type: 'string' } } as const;

const approvalNeededSchema = {
  type: 'object',
  required: [
    'step_position',
    'required',
    'received',
    'remaining',
    'eligible',
    'allow_self_approval',
    'timeout',
    'expires_at',
  ],
  properties: {
    step_position: { type: 'integer', minimum: 0 },
    required: { type: 'integer', minimum: 1, description: 'Distinct approvers the step needs' },
    received: { type: 'integer', minimum: 0 },
    remaining: { type: 'integer', minimum: 0 },
    eligible: {
      type: 'object',
      description:
        'Who may approve, as the rule names them (resolved when each decides); any_forge_writer when it names no one',
      required: ['teams', 'roles', 'users', 'any_forge_writer'],
      properties: { teams: stringList, roles: stringList, users: stringList, any_forge_writer: { type: 'boolean' } },
      additionalProperties: false,
    },
    allow_self_approval: { type: 'boolean' },
    timeout: { type: ['string', 'null'], description: "The step's approval_timeout (`72h`)" },
    expires_at: { ...OPTIONAL_TIMESTAMP, description: 'When the run fails if the step is still undecided' },
  },
  additionalProperties: false,
} as const;

/** A run as POST /forge/runs and GET /forge/runs/{runId} answer (steps and decisions: the GET). */
export const runSchema = {
  type: 'object',
  required: RUN_FIELDS,
  properties: {
    ...runProperties,
    steps: { type: 'array', items: runStepSchema },
    decisions: { type: 'array', items: runDecisionSchema },
    approval: {
      description: 'While the run waits for approval: who is still needed, by the rule of the step waiting',
      oneOf: [{ type: 'null' }, approvalNeededSchema],
    },
    temporal_ui_url: {
      type: 'string',
      description:
        "The run's workflow in the Temporal Web UI: for platform operators only (the UI shows every tenant's runs)",
    },
  },
  additionalProperties: false,
} as const;

export const runPageSchema = {
  type: 'object',
  required: ['runs', 'pagination'],
  properties: { runs: { type: 'array', items: runSummarySchema }, pagination: shapeAForgePaginationSchema },
  additionalProperties: false,
} as const;

export const logLineSchema = {
  type: 'object',
  required: ['id', 'step_position', 'level', 'message', 'created_at'],
  properties: {
    id: { type: 'integer', description: 'Increasing within a run: the order of the lines' },
    step_position: { type: ['integer', 'null'] },
    level: { type: 'string', enum: LOG_LEVELS },
    message: { type: 'string' },
    created_at: TIMESTAMP,
  },
  additionalProperties: false,
} as const;

export const logPageSchema = {
  type: 'object',
  required: ['lines', 'next_cursor'],
  properties: {
    lines: { type: 'array', items: logLineSchema },
    next_cursor: { type: 'string', description: "Pass as `cursor` for the next lines; '' when there are no more" },
  },
  additionalProperties: false,
} as const;

const outcomeCounts = {
  runs: { type: 'integer' },
  completed: { type: 'integer' },
  failed: { type: 'integer' },
} as const;

export const statsSchema = {
  type: 'object',
  required: ['total_runs', 'by_status', 'success_rate', 'by_mold'],
  properties: {
    total_runs: { type: 'integer' },
    by_status: {
      type: 'object',
      required: RUN_STATUSES,
      properties: integerPer(RUN_STATUSES),
      additionalProperties: false,
    },
    success_rate: { type: ['number', 'null'], description: 'Completed over finished (completed + failed)' },
    by_mold: {
      type: 'array',
      items: {
        type: 'object',
        required: ['mold_slug', 'runs', 'completed', 'failed', 'success_rate', 'mean_duration_seconds'],
        properties: {
          mold_slug: { type: 'string' },
          ...outcomeCounts,
          success_rate: { type: ['number', 'null'] },
          mean_duration_seconds: { type: ['number', 'null'] },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

/** POST /forge/runs with dry_run: what the run would do, nothing started or stored. */
export const runPlanSchema = {
  type: 'object',
  required: ['dry_run', 'mold_slug', 'mold_version', 'parameters', 'secrets', 'steps'],
  properties: {
    dry_run: { type: 'boolean', const: true },
    mold_slug: { type: 'string' },
    mold_version: { type: 'integer' },
    parameters: { ...FREE_OBJECT, description: 'The parameters checked, defaults filled in, secrets left out' },
    secrets: {
      ...stringList,
      description: 'Parameters left out of `parameters` because their names say they are secrets',
    },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['position', 'name', 'type', 'requires_approval', 'config', 'secrets', 'approval'],
        properties: {
          position: { type: 'integer', minimum: 0 },
          name: { type: 'string' },
          type: { type: 'string', enum: ACTION_TYPES },
          requires_approval: { type: 'boolean' },
          config: {
            ...FREE_OBJECT,
            description:
              "The action's config as it would run: parameters filled in (a script's as its `environment`), defaults applied, secret-named values left out",
          },
          secrets: { ...stringList, description: 'Dotted paths of the config values left out as secrets' },
          approval: {
            description: 'For a step that waits for approval: its rule and timeout',
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                required: ['teams', 'roles', 'users', 'count', 'allow_self_approval', 'timeout'],
                properties: {
                  teams: stringList,
                  roles: stringList,
                  users: stringList,
                  count: { type: 'integer', minimum: 1 },
                  allow_self_approval: { type: 'boolean' },
                  timeout: { type: ['string', 'null'] },
                },
                additionalProperties: false,
              },
            ],
          },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
