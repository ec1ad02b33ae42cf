import { RUN_STATUSES } from '../../core/forge/types';

// Request and response shapes of the forge routes; a mold's own parts are in core/forge/types.

export const slugParams = {
  type: 'object',
  required: ['slug'],
  properties: { slug: { type: 'string', maxLength: 100 } },
} as const;

const TIMESTAMP = { type: ['string', 'null'], format: 'date-time' } as const;

/** A run as POST /forge/runs and GET /forge/runs/{runId} answer (steps and decisions: the GET). */
export const runSchema = {
  type: 'object',
  required: ['id', 'mold_slug', 'mold_version', 'parameters', 'status', 'started_by', 'workflow_id', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    mold_slug: { type: 'string' },
    mold_version: { type: 'integer' },
    parameters: { type: 'object' },
    status: { type: 'string', enum: RUN_STATUSES },
    error: { type: ['string', 'null'] },
    started_by: { type: 'string' },
    workflow_id: { type: 'string' },
    created_at: TIMESTAMP,
    started_at: TIMESTAMP,
    finished_at: TIMESTAMP,
    steps: { type: 'array', items: { type: 'object' } },
    decisions: { type: 'array', items: { type: 'object' } },
    temporal_ui_url: {
      type: 'string',
      description:
        "The run's workflow in the Temporal Web UI: for platform operators only (the UI shows every tenant's runs)",
    },
  },
} as const;
