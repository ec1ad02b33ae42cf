import { MANIFEST_TYPES } from '../../core/catalog/types';
import { MANIFEST_SCHEMA } from '../../core/manifests/manifestRules';
import { QUALITY_FIELDS, QUALITY_STATUSES } from '../../core/manifests/qualityRules';
import { APPLY_RESULTS, DOCUMENT_OUTCOMES } from '../../core/manifests/types';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';
import { entitySchema } from '../catalog/schemas';
import { errorEnvelopeSchema } from '../http/errorHandler';

// Manifests' request and response schemas. YAML travels as a string field of a JSON body, so
// every route keeps the app's one body parser, its size limit and the error envelope.

/** Characters of YAML one request carries; the JSON body as a whole is also held to BODY_LIMIT (1 MiB by default). */
const MAX_CONTENT_CHARS = 1_000_000;

export const manifestBodySchema = {
  type: 'object',
  required: ['content'],
  properties: {
    content: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CONTENT_CHARS,
      description: `YAML: one document, or for validate, analyze, convert and import a stream of documents separated by \`---\`. docs/limits.md ("Parsed input") gives the budgets: documents, nodes as aliases expand, keys per map, nesting, time`,
    },
    format: {
      type: 'string',
      enum: MANIFEST_TYPES,
      description:
        'How to read every document: `shipyard` (ours) or `backstage`. Absent: each by its apiVersion (`backstage.io/…` is Backstage’s, anything else ours)',
    },
  },
  additionalProperties: false,
} as const;

/** What reading a body's YAML may answer instead (docs/limits.md, "Parsed input"), declared on each route that reads it. */
export const yamlRefusals = {
  400: {
    description:
      'An invalid body, or content over a parsing budget: more than SHIPYARD_MANIFEST_MAX_DOCUMENTS documents, a document over SHIPYARD_MANIFEST_MAX_NODES nodes as its aliases expand, a map over SHIPYARD_MANIFEST_MAX_KEYS keys, more than 64 levels of nesting, or an alias inside its own anchor',
    schema: errorEnvelopeSchema,
  },
  413: {
    description: 'A body over BODY_LIMIT, or content that took longer than SHIPYARD_MANIFEST_PARSE_TIMEOUT_MS to read',
    schema: errorEnvelopeSchema,
  },
} as const;

export const manifestRefParams = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 63, description: 'The manifest id, or the service_id it declares' },
  },
  additionalProperties: false,
} as const;

export const manifestListQuery = {
  type: 'object',
  properties: { ...keysetListQuery(), manifest_type: { type: 'string', enum: MANIFEST_TYPES } },
  additionalProperties: false,
} as const;

const manifestSummaryProperties = {
  id: { type: 'string', format: 'uuid' },
  entity_id: { type: 'string', format: 'uuid' },
  service_id: { type: 'string' },
  manifest_type: { type: 'string', enum: MANIFEST_TYPES },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
} as const;
const manifestSummaryRequired = ['id', 'entity_id', 'service_id', 'manifest_type', 'created_at', 'updated_at'] as const;

export const manifestListSchema = keysetPageSchema('manifests', {
  type: 'object',
  required: manifestSummaryRequired,
  properties: manifestSummaryProperties,
  additionalProperties: false,
} as const);

export const manifestSchema = {
  type: 'object',
  required: [...manifestSummaryRequired, 'content'],
  properties: {
    ...manifestSummaryProperties,
    content: { type: 'string', description: 'The document as it was written (ours or Backstage’s)' },
  },
  additionalProperties: false,
} as const;

const sourceNoteSchema = {
  type: 'object',
  required: ['path', 'line', 'column', 'message'],
  properties: {
    path: { type: 'string', description: 'The field (`spec.relations[0].target`); empty for the whole document' },
    line: { type: 'integer', minimum: 1 },
    column: { type: 'integer', minimum: 1 },
    message: { type: 'string' },
  },
  additionalProperties: false,
} as const;
const notes = { type: 'array', items: sourceNoteSchema } as const;

const documentProperties = {
  index: { type: 'integer', minimum: 0, description: 'Among the non-empty documents of `content`, from 0' },
  line: { type: 'integer', minimum: 1, description: 'Where the document starts' },
  format: { type: 'string', enum: MANIFEST_TYPES },
  kind: { type: ['string', 'null'] },
  service_id: { type: ['string', 'null'], description: 'The entity it declares, when that can be read' },
  problems: notes,
  warnings: notes,
} as const;
const documentRequired = ['index', 'line', 'format', 'kind', 'service_id', 'problems', 'warnings'] as const;

/** One report per document of a request: what every document says of itself, then `own`. */
function documentReports<const R extends readonly string[], const P extends object>(own: {
  required: R;
  properties: P;
}) {
  return {
    type: 'array',
    items: {
      type: 'object',
      required: [...documentRequired, ...own.required] as [...typeof documentRequired, ...R],
      properties: { ...documentProperties, ...own.properties },
      additionalProperties: false,
    },
  } as const;
}

const outcome = {
  type: 'string',
  enum: DOCUMENT_OUTCOMES,
  description: '`skipped`: a kind that declares no entity (Group, unknown kinds), with a warning',
} as const;

export const appliedManifestSchema = {
  type: 'object',
  required: ['result', 'manifest', 'entity', 'warnings'],
  properties: {
    result: { type: 'string', enum: ['created', 'updated'] },
    manifest: manifestSchema,
    entity: entitySchema,
    warnings: notes,
  },
  additionalProperties: false,
} as const;

export const validationSchema = {
  type: 'object',
  required: ['valid', 'documents'],
  properties: {
    valid: { type: 'boolean', description: 'At least one document, and none rejected' },
    documents: documentReports({ required: ['outcome'], properties: { outcome } }),
  },
  additionalProperties: false,
} as const;

export const analysisSchema = {
  type: 'object',
  required: ['documents'],
  properties: {
    documents: documentReports({
      required: ['score', 'checks', 'missing', 'weak'],
      properties: {
        score: {
          type: ['integer', 'null'],
          minimum: 0,
          maximum: 100,
          description: 'null when the document cannot be read as a manifest',
        },
        checks: {
          type: 'array',
          items: {
            type: 'object',
            required: ['field', 'status', 'points', 'weight', 'message'],
            properties: {
              field: { type: 'string', enum: QUALITY_FIELDS },
              status: { type: 'string', enum: QUALITY_STATUSES },
              points: { type: 'integer', minimum: 0 },
              weight: { type: 'integer', minimum: 0 },
              message: { type: 'string' },
            },
            additionalProperties: false,
          },
        },
        missing: { type: 'array', items: { type: 'string', enum: QUALITY_FIELDS } },
        weak: { type: 'array', items: { type: 'string', enum: QUALITY_FIELDS } },
      },
    }),
  },
  additionalProperties: false,
} as const;

export const conversionSchema = {
  type: 'object',
  required: ['content', 'documents'],
  properties: {
    content: { type: 'string', description: 'Every converted manifest, as one YAML stream (ready for import)' },
    documents: documentReports({
      required: ['outcome', 'manifest'],
      properties: {
        outcome,
        manifest: { anyOf: [MANIFEST_SCHEMA, { type: 'null' }], description: 'Our format; null unless accepted' },
      },
    }),
  },
  additionalProperties: false,
} as const;

export const importReportSchema = {
  type: 'object',
  required: ['created', 'updated', 'skipped', 'rejected', 'documents'],
  properties: {
    created: { type: 'integer', minimum: 0 },
    updated: { type: 'integer', minimum: 0 },
    skipped: { type: 'integer', minimum: 0 },
    rejected: { type: 'integer', minimum: 0 },
    documents: documentReports({
      required: ['result', 'entity_id', 'manifest_id'],
      properties: {
        result: { type: 'string', enum: APPLY_RESULTS },
        entity_id: { type: ['string', 'null'], format: 'uuid' },
        manifest_id: { type: ['string', 'null'], format: 'uuid' },
      },
    }),
  },
  additionalProperties: false,
} as const;
