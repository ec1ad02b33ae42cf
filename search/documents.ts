import type { Knex } from 'knex';
import { toIsoOrNull } from '../core/timestamps';
import type { OutboxCollection, SearchCollection } from './collections';

/** What every collection's index holds for one row (search/indices.ts maps it). */
export interface SearchDocument {
  tenant_id: string;
  collection: SearchCollection;
  /** The row's own handle: an entity's service_id, a mold's or team's slug, a user's email. */
  key: string;
  title: string;
  description: string | null;
  type: string | null;
  lifecycle: string | null;
  owner: string | null;
  tier: string | null;
  tags: string[];
  updated_at: string | null;
  suggest: { input: string[]; contexts: { tenant: string[] } };
}

/**
 * An entity's document adds what cluster agents reported of its present workloads (absent when
 * none): the spec's entity results cover workloads, which are not indexed themselves.
 */
export interface EntityDocument extends SearchDocument {
  collection: 'entities';
  kubernetes?: { clusters: string[]; namespaces: string[]; images: string[] };
  /** The latest scorecard grade (absent before the first scoring); a grade change enqueues the document. */
  grade?: string;
}

/** A documentation file (the docs index): a repository's README or a Markdown file under docs/. */
export interface DocDocument extends SearchDocument {
  collection: 'docs';
  /** The repository's full name (`owner/name`). */
  repository: string;
  path: string;
  content: string;
}

type Row = Omit<SearchDocument, 'collection' | 'suggest' | 'updated_at'> & {
  id: string;
  updated_at: Date | null;
  kubernetes?: EntityDocument['kubernetes'] | null;
  grade?: string | null;
};

/**
 * Per collection, the SQL that reads its rows as documents' fields. Read through the system
 * role (the drain and backfill serve every tenant): each row carries its own tenant.
 */
const SELECTS: Record<OutboxCollection, { table: string; columns: string }> = {
  entities: {
    table: 'entities',
    columns: `id, tenant_id, service_id as key, name as title, description, type, lifecycle, owner, tier, tags,
      updated_at, (
        select jsonb_build_object(
            'clusters', array_agg(distinct w.cluster_id),
            'namespaces', array_agg(distinct w.namespace),
            'images', array_remove(array_agg(distinct image), null))
          from k8s_workloads w left join lateral unnest(w.images) image on true
         where w.entity_id = entities.id and w.gone_at is null
        having count(*) > 0
      ) as kubernetes,
      (select s.grade from entity_scorecards s where s.entity_id = entities.id) as grade`,
  },
  repositories: {
    table: 'repositories',
    columns: `id, tenant_id, full_name as key, full_name as title, description, language as type, null as lifecycle,
      owner, null as tier, topics as tags, updated_at`,
  },
  molds: {
    table: 'molds',
    columns: `id, tenant_id, slug as key, name as title, nullif(description, '') as description, category as type,
      null as lifecycle, created_by as owner, null as tier, entity_types as tags, updated_at`,
  },
  users: {
    table: 'users',
    columns: `id, tenant_id, email as key, coalesce(nullif(name, ''), email) as title, null as description,
      null as type, null as lifecycle, null as owner, null as tier, '{}'::text[] as tags, null as updated_at`,
  },
  teams: {
    table: 'teams',
    columns: `id, tenant_id, slug as key, name as title, nullif(description, '') as description, null as type,
      null as lifecycle, null as owner, null as tier, '{}'::text[] as tags, updated_at`,
  },
};

const documentOf = (
  collection: OutboxCollection,
  { updated_at, kubernetes, grade, ...fields }: Omit<Row, 'id'>,
): SearchDocument => ({
  ...fields,
  ...(kubernetes && { kubernetes }),
  ...(grade && { grade }),
  collection,
  updated_at: toIsoOrNull(updated_at),
  suggest: suggestionOf(fields),
});

const CONTROL_CHARACTERS = /\p{Cc}+/gu;

/**
 * Text as type-ahead takes it, in documents and in queries alike: without control characters,
 * which mean nothing there and include the completion field's own separators (U+001D to U+001F;
 * the engine refuses a document or a prefix that holds one).
 */
export const typeAheadText = (text: string) => text.replace(CONTROL_CHARACTERS, ' ').trim();

/** The type-ahead input of a document: its title and key, in its tenant's context. */
export const suggestionOf = (fields: Pick<SearchDocument, 'title' | 'key' | 'tenant_id'>) => ({
  input: [fields.title, fields.key].map(typeAheadText).filter((text) => text !== ''),
  contexts: { tenant: [fields.tenant_id] },
});

/** The current documents of `ids` in `collection`; an id with no row (deleted) is absent. */
export async function loadDocuments(
  db: Knex,
  collection: OutboxCollection,
  ids: string[],
): Promise<Map<string, SearchDocument>> {
  const { table, columns } = SELECTS[collection];
  const { rows } = await db.raw<{ rows: Row[] }>(`select ${columns} from ${table} where id = any(?::uuid[])`, [ids]);
  return new Map(rows.map(({ id, ...row }) => [id, documentOf(collection, row)]));
}

/** Up to `limit` documents of every tenant in id order, after `afterId` (null: from the start). */
export async function loadDocumentsAfter(
  db: Knex,
  collection: OutboxCollection,
  afterId: string | null,
  limit: number,
): Promise<{ id: string; document: SearchDocument }[]> {
  const { table, columns } = SELECTS[collection];
  // Two statements rather than `? is null or id > ?`, which a generic plan cannot serve from the key.
  const { rows } =
    afterId === null
      ? await db.raw<{ rows: Row[] }>(`select ${columns} from ${table} order by id limit ?`, [limit])
      : await db.raw<{ rows: Row[] }>(`select ${columns} from ${table} where id > ? order by id limit ?`, [
          afterId,
          limit,
        ]);
  return rows.map(({ id, ...row }) => ({ id, document: documentOf(collection, row) }));
}
