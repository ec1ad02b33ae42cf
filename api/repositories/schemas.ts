import { REPOSITORY_SORTS } from '../../core/repositories/store';
import { CRAWL_STATUSES, REPOSITORY_PROVIDERS } from '../../core/repositories/types';
import { SHAPE_B_QUERY } from '../http/pagination';

// GET /repositories: shape B with the spec's filters and sorts.

const filterText = (description: string) => ({ type: 'string', minLength: 1, maxLength: 255, description }) as const;

export const repositoryListQuery = {
  type: 'object',
  properties: {
    ...SHAPE_B_QUERY,
    search: filterText('Part of the full name or the description, any case'),
    provider: { type: 'string', enum: REPOSITORY_PROVIDERS },
    owner: filterText('The owning account or organisation, exactly'),
    language: filterText('The main language, any case'),
    topic: filterText('One of its topics'),
    team: filterText('The slug of the team owning an entity that links to the repository'),
    sort: { type: 'string', enum: REPOSITORY_SORTS, default: 'name' },
    order: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
    show_forks: { type: 'boolean', default: false },
    show_archived: { type: 'boolean', default: false },
    show_private: { type: 'boolean', default: true },
  },
  additionalProperties: false,
} as const;

const nullableString = { type: ['string', 'null'] } as const;

export const repositorySchema = {
  type: 'object',
  required: [
    'id',
    'provider',
    'full_name',
    'owner',
    'name',
    'description',
    'language',
    'topics',
    'fork',
    'archived',
    'private',
    'default_branch',
    'html_url',
    'crawl_status',
    'crawl_error',
    'last_crawled_at',
    'next_crawl_at',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    provider: { type: 'string', enum: REPOSITORY_PROVIDERS },
    full_name: { type: 'string', description: 'owner/name' },
    owner: { type: 'string' },
    name: { type: 'string' },
    description: nullableString,
    language: nullableString,
    topics: { type: 'array', items: { type: 'string' } },
    fork: { type: 'boolean' },
    archived: { type: 'boolean' },
    private: { type: 'boolean' },
    default_branch: { type: 'string' },
    html_url: nullableString,
    crawl_status: { type: 'string', enum: CRAWL_STATUSES },
    crawl_error: { ...nullableString, description: 'Why the last crawl failed' },
    last_crawled_at: { type: ['string', 'null'], format: 'date-time' },
    next_crawl_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const repositoryListSchema = {
  type: 'object',
  required: ['repositories', 'pagination'],
  properties: {
    repositories: { type: 'array', items: repositorySchema },
    pagination: {
      type: 'object',
      required: ['page', 'pageSize', 'totalPages', 'totalItems', 'hasNext', 'hasPrevious'],
      properties: {
        page: { type: 'integer' },
        pageSize: { type: 'integer' },
        totalPages: { type: 'integer' },
        totalItems: { type: 'integer' },
        hasNext: { type: 'boolean' },
        hasPrevious: { type: 'boolean' },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;
