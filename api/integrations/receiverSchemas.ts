// POST /integrations/vcs-host-a/webhook: the query, each event's payload as far as the receiver
// reads it, and its answer. Payloads are the host's: they carry many more fields, which are
// allowed and ignored. Names follow the repositories table's rules, so a payload the database
// would refuse is a 400 here.

export const receiverQuery = {
  type: 'object',
  required: ['integration'],
  properties: {
    integration: {
      type: 'string',
      format: 'uuid',
      description: 'The id of the vcs-host-a integration whose `webhook_secret` signs the deliveries',
    },
  },
  additionalProperties: false,
} as const;

const NAME = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' } as const;
const LOGIN = { type: 'object', required: ['login'], properties: { login: NAME } } as const;
const TEXT = { type: ['string', 'null'], maxLength: 10_000 } as const;
const PATHS = { type: 'array', items: { type: 'string', maxLength: 4096 } } as const;

const repository = {
  type: 'object',
  required: ['full_name', 'name', 'owner'],
  properties: {
    full_name: { type: 'string', maxLength: 255, pattern: '^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$' },
    name: NAME,
    owner: LOGIN,
    description: TEXT,
    language: { type: ['string', 'null'], maxLength: 200 },
    topics: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 100 } },
    fork: { type: 'boolean' },
    archived: { type: 'boolean' },
    private: { type: 'boolean' },
    default_branch: { type: 'string', maxLength: 255 },
    html_url: { type: ['string', 'null'], maxLength: 2000 },
  },
} as const;

/** What the receiver reads of each event it handles; other events are not read at all. */
export const receiverPayloadSchemas = {
  ping: { type: 'object' },
  push: {
    type: 'object',
    required: ['ref', 'repository'],
    properties: {
      ref: { type: 'string', maxLength: 1000 },
      deleted: { type: 'boolean' },
      repository,
      commits: {
        type: 'array',
        items: { type: 'object', properties: { added: PATHS, removed: PATHS, modified: PATHS } },
      },
    },
  },
  repository: {
    type: 'object',
    required: ['action', 'repository'],
    properties: {
      action: { type: 'string', maxLength: 100 },
      repository,
      changes: {
        type: 'object',
        properties: {
          repository: {
            type: 'object',
            properties: { name: { type: 'object', properties: { from: NAME } } },
          },
          owner: {
            type: 'object',
            properties: {
              from: { type: 'object', properties: { user: LOGIN, organization: LOGIN } },
            },
          },
        },
      },
    },
  },
} as const;

export const receiverAnswerSchema = {
  type: 'object',
  required: ['status', 'event'],
  properties: {
    status: {
      type: 'string',
      enum: ['processed', 'duplicate', 'ignored'],
      description:
        '`duplicate`: this `X-Hub-Delivery` was processed before, nothing was done again; ' +
        '`ignored`: an event or action the receiver does not act on',
    },
    event: { type: 'string', description: 'The `X-Hub-Event` received' },
    repository_id: { type: 'string', format: 'uuid', description: 'The repository the event changed' },
    crawl: {
      type: 'string',
      enum: ['started', 'scheduled'],
      description:
        "The repository's documentation is crawled again: `started`, or `scheduled` (the crawl could not be " +
        'started now: the repository is due, and the hourly crawl tick takes it)',
    },
  },
  additionalProperties: false,
} as const;
