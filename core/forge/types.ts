import { workflowId } from '../searchAttributes';
import type { FromSchema } from 'json-schema-to-ts';
import { ENTITY_TYPES } from '../catalog/types';

// The forge's vocabulary and shapes, defined once: the enumerations (`as const`, so schemas,
// types, stores and workflows share them; the database's CHECK constraints are tested against
// them), the JSON Schemas of a mold's parts, and what crosses the API → workflow → activity
// boundary. No I/O: workflows import these types.

export const PARAMETER_TYPES = ['string', 'number', 'boolean', 'select', 'multi-select'] as const;
export const ACTION_TYPES = ['vcs-host-a-action', 'api-call', 'script', 'approval'] as const;
export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled', 'awaiting_approval'] as const;
export const STEP_STATUSES = [...RUN_STATUSES, 'skipped'] as const;
export const LOG_LEVELS = ['info', 'warn', 'error'] as const;
export const DECISION_KINDS = ['approve', 'reject', 'cancel'] as const;
/** What a forge slot admits: a run to start, or one action of it to execute (core/forge/slotStore.ts). */
export const SLOT_KINDS = ['run', 'action'] as const;

const NAME = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' } as const;

/** Choices of a select or multi-select: a form shows them all, and a run's value is checked against them. */
export const MAX_OPTIONS = 500;

export const moldParameterSchema = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: NAME,
    type: { type: 'string', enum: PARAMETER_TYPES },
    label: { type: 'string', maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    required: { type: 'boolean', default: false },
    default: {},
    options: {
      type: 'array',
      maxItems: MAX_OPTIONS,
      items: { type: 'string', minLength: 1, maxLength: 200 },
      uniqueItems: true,
    },
  },
  additionalProperties: false,
} as const;

const TIMEOUT = { type: 'integer', minimum: 1, maximum: 600 } as const;
const MAX_ATTEMPTS = { type: 'integer', minimum: 1, maximum: 10, default: 3 } as const;

/**
 * Per action type, the config it takes (required but for approval). `${{ parameters.x }}`
 * templating is allowed in strings; moldRules checks the references and the api-call URL.
 */
export const actionConfigSchemas = {
  'api-call': {
    type: 'object',
    required: ['url'],
    properties: {
      method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'GET' },
      url: { type: 'string', minLength: 1, maxLength: 2000 },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: {},
      timeout_seconds: { ...TIMEOUT, default: 30 },
      max_attempts: MAX_ATTEMPTS,
    },
    additionalProperties: false,
  },
  script: {
    type: 'object',
    required: ['script'],
    properties: {
      script: { type: 'string', minLength: 1, maxLength: 100_000 },
      timeout_seconds: { ...TIMEOUT, default: 60 },
      max_output_bytes: { type: 'integer', minimum: 1024, maximum: 1_048_576, default: 65_536 },
      // Attempts are spent only when a worker is lost mid-script; the script's own failure is final.
      max_attempts: MAX_ATTEMPTS,
    },
    additionalProperties: false,
  },
  'vcs-host-a-action': {
    type: 'object',
    required: ['path'],
    properties: {
      method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'POST' },
      path: { type: 'string', pattern: '^/', maxLength: 2000 },
      body: {},
      integration_id: { type: 'string', format: 'uuid' },
      timeout_seconds: { ...TIMEOUT, default: 30 },
      max_attempts: MAX_ATTEMPTS,
    },
    additionalProperties: false,
  },
  approval: {
    type: 'object',
    properties: { message: { type: 'string', maxLength: 2000 } },
    additionalProperties: false,
  },
} as const;

type ConfigSchema = { properties: Record<string, { default?: unknown }> };

/** Per action type, the config values its schema defaults (e.g. api-call: method GET, timeout_seconds 30). */
export const ACTION_CONFIG_DEFAULTS = Object.fromEntries(
  ACTION_TYPES.map((type) => [
    type,
    Object.fromEntries(
      Object.entries((actionConfigSchemas[type] as ConfigSchema).properties).flatMap(([name, property]) =>
        property.default === undefined ? [] : [[name, property.default]],
      ),
    ),
  ]),
) as Record<ActionType, Readonly<Record<string, unknown>>>;

/** The longest `approval_timeout`: a run may wait this long for a person, no longer. */
export const MAX_APPROVAL_TIMEOUT_DAYS = 30;
/** Most approvals a rule may ask for (`approvers.count`), and most references it may list. */
export const MAX_APPROVALS = 10;
const MAX_APPROVER_REFERENCES = 50;

/**
 * Who may approve a step that needs approval. Teams by slug, roles by key (built-in or a role
 * bundle's id), users by email; a caller matching any of them is eligible. None of the three:
 * any forge:write user. `count` distinct approvers resume the run. The run's starter is never
 * eligible unless `allow_self_approval`.
 */
export const approverRuleSchema = {
  type: 'object',
  properties: {
    teams: {
      type: 'array',
      maxItems: MAX_APPROVER_REFERENCES,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 100 },
    },
    roles: {
      type: 'array',
      maxItems: MAX_APPROVER_REFERENCES,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 100 },
    },
    users: {
      type: 'array',
      maxItems: MAX_APPROVER_REFERENCES,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 320 },
    },
    count: { type: 'integer', minimum: 1, maximum: MAX_APPROVALS, default: 1 },
    allow_self_approval: { type: 'boolean', default: false },
  },
  additionalProperties: false,
} as const;

/** `30m`, `72h`, `7d`: minutes, hours or days, at most MAX_APPROVAL_TIMEOUT_DAYS (moldRules checks the bound). */
export const APPROVAL_TIMEOUT_PATTERN = '^[1-9][0-9]{0,5}[mhd]$';

export const moldActionSchema = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: NAME,
    type: { type: 'string', enum: ACTION_TYPES },
    config: { type: 'object' },
    requires_approval: { type: 'boolean', default: false },
    /** For a step that needs approval: who may give it. */
    approvers: approverRuleSchema,
    /** For a step that needs approval: how long it waits for a decision before the run fails. */
    approval_timeout: { type: 'string', pattern: APPROVAL_TIMEOUT_PATTERN },
  },
  additionalProperties: false,
  allOf: ACTION_TYPES.map((type) => ({
    if: { properties: { type: { const: type } } },
    then: { ...(type !== 'approval' && { required: ['config'] }), properties: { config: actionConfigSchemas[type] } },
  })),
} as const;

/**
 * An action with its schema's defaults filled in. Request validation fills them in new bodies;
 * this covers molds stored before it did, so a run's steps always carry every value and
 * activities and the workflow read them without defaults of their own.
 */
export function withActionDefaults(action: MoldAction): MoldAction & { requires_approval: boolean } {
  const defaults = moldActionSchema.properties.requires_approval.default;
  const config = { ...ACTION_CONFIG_DEFAULTS[action.type], ...(action.config ?? {}) };
  return {
    ...action,
    ...(Object.keys(config).length > 0 && { config }),
    requires_approval: action.requires_approval ?? defaults,
  };
}

const moldFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  category: { type: 'string', maxLength: 100 },
  icon: { type: 'string', maxLength: 200 },
  parameters: { type: 'array', maxItems: 100, items: moldParameterSchema },
  actions: { type: 'array', maxItems: 100, items: moldActionSchema },
  /** The entity types whose quick actions list this mold (once published); none when empty. */
  entity_types: {
    type: 'array',
    maxItems: ENTITY_TYPES.length,
    uniqueItems: true,
    items: { type: 'string', enum: ENTITY_TYPES },
  },
  /** Its completed runs are deployments of the entity their `entity_id` parameter names (DORA metrics). */
  deploys: { type: 'boolean' },
} as const;

export const createMoldSchema = {
  type: 'object',
  required: ['name', 'slug'],
  properties: {
    ...moldFields,
    slug: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,99}$' },
    requires_approval: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

export const updateMoldSchema = {
  type: 'object',
  minProperties: 1,
  properties: { ...moldFields, requires_approval: { type: 'boolean' } },
  additionalProperties: false,
} as const;

export type MoldParameter = FromSchema<typeof moldParameterSchema>;
export type MoldAction = FromSchema<typeof moldActionSchema>;
export type ApproverRule = FromSchema<typeof approverRuleSchema>;
export type CreateMoldRequest = FromSchema<typeof createMoldSchema>;
export type UpdateMoldRequest = FromSchema<typeof updateMoldSchema>;

export type ActionType = (typeof ACTION_TYPES)[number];
export type StepStatus = (typeof STEP_STATUSES)[number];
export type RunStatus = (typeof RUN_STATUSES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type DecisionKind = (typeof DECISION_KINDS)[number];
export type SlotKind = (typeof SLOT_KINDS)[number];

export interface RunStepSpec {
  position: number;
  name: string;
  type: ActionType;
  config: Record<string, unknown>;
  requiresApproval: boolean;
  /**
   * From version 5, a step that needs approval and has `approval_timeout`: how long the workflow
   * waits for the decision (`72h`, a duration Temporal reads) before the run fails.
   */
  approvalTimeout?: string;
}

/**
 * The forge run workflow's version, as the API names it in each run's input: the workflow reads
 * it there (so in its history, alike on every replay) instead of recording patch markers, and
 * a change that alters its commands raises it. 3: the actions mark their steps and the run.
 * 4: the run and each action take a tenant's slot first; parameters stay in the run's row.
 * 5: an approval step with `approvalTimeout` waits on a timer, and fails the run when it fires.
 */
export const FORGE_RUN_VERSION = 5;

/** The settings a run's workflow needs from the configuration (it cannot read it itself). */
export interface RunLimits {
  /** A step's time across all its attempts. */
  stepBudgetSeconds: number;
  /** How long a run waiting for a slot sleeps before it looks again, when no signal wakes it. */
  slotRecheckSeconds: number;
}

export interface ForgeRunInput {
  tenantId: string;
  runId: string;
  steps: RunStepSpec[];
  /** Up to version 3 only: later runs' actions read them from the run's row (history stays small). */
  parameters?: Record<string, unknown>;
  /** FORGE_RUN_VERSION when the run started. Absent from runs started before it was carried here. */
  version?: number;
  /** From version 4, whose runs take slots (core/forge/slotStore.ts); absent before. */
  limits?: RunLimits;
}

export const RECONCILE_SCHEDULE_ID = 'shipyard-forge-reconcile';

export type ReconcileForgeRunsWorkflow = () => Promise<number>;

/** Who approved, rejected or cancelled, with an optional comment. */
export interface Decision {
  actor: string;
  comment?: string;
}

/** An approve or reject names the approval step it answers, so it can never apply to another. */
export interface StepDecision extends Decision {
  position: number;
}

/**
 * What writing a run's status did. `cancel-accepted`: the run was about to end otherwise, but
 * the API had already accepted a cancel (its signal is on the way), so the run must end cancelled.
 * `already-finished`: the run had ended (or never started: the API marks a run failed when its
 * workflow could not be started), so nothing was written. `not-visible`: there is no such run.
 */
export type MarkRunResult = 'written' | 'not-visible' | 'cancel-accepted' | 'already-finished';

/** What a forge activity answers the workflow for a status write (a run not there fails it instead). */
export type RunMarkOutcome = Exclude<MarkRunResult, 'not-visible'>;

export const forgeWorkflowId = (runId: string) => workflowId('forge-run', runId);

/** The forge run workflow as it is started, by name (`forgeRun`); workflows/forgeRun.ts implements it. */
export type ForgeRunWorkflow = (input: ForgeRunInput) => Promise<void>;

/** A mold's fields apart from its parameters and actions: what a list reads and its schemas require. */
export const MOLD_HEADER_FIELDS = [
  'id',
  'slug',
  'name',
  'description',
  'category',
  'icon',
  'published',
  'version',
  'requires_approval',
  'entity_types',
  'deploys',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** A run record's fields (without its steps, decisions or links): the columns read, the fields required. */
export const RUN_FIELDS = [
  'id',
  'mold_slug',
  'mold_version',
  'parameters',
  'status',
  'error',
  'started_by',
  'workflow_id',
  'retry_of',
  'created_at',
  'started_at',
  'finished_at',
] as const;
