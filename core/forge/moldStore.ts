import type { Knex } from 'knex';
import type { EntityType } from '../catalog/types';
import type { OffsetWindow } from '../paging';
import {
  withActionDefaults,
  type ActionType,
  type CreateMoldRequest,
  type MoldAction,
  type MoldParameter,
  type UpdateMoldRequest,
  MOLD_HEADER_FIELDS,
} from './types';
import { toIso } from '../timestamps';
import { givenFilters, statement, whereGiven, type Placeholders } from '../../db/statements';

export interface MoldRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  category: string | null;
  icon: string | null;
  published: boolean;
  version: number;
  parameters: MoldParameter[];
  actions: MoldAction[];
  requires_approval: boolean;
  entity_types: EntityType[];
  deploys: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** Every column but the tenant, which RLS already fixes. */
const MOLD_COLUMNS = [...MOLD_HEADER_FIELDS, 'parameters', 'actions'];

export type Mold = ReturnType<typeof toMold>;

export function toMold(row: MoldRow) {
  return {
    ...row,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** A list item: the header, how many parameters, and each action's name and type (no configs). */
export interface MoldSummary extends Omit<Mold, 'parameters' | 'actions'> {
  parameter_count: number;
  actions: { name: string; type: ActionType }[];
}

export interface MoldFilter {
  category?: string;
  /** Which publication states to include. */
  published?: boolean;
}

const FILTER_COLUMNS = { category: 'category', published: 'published' };

/** Which of a list's filters the request gives. */
type MoldListShape = (keyof typeof FILTER_COLUMNS)[];

const filteredMolds = (q: Knex, filter: Placeholders<MoldFilter>, shape: MoldListShape) =>
  whereGiven(q('molds'), FILTER_COLUMNS, filter, shape);

type MoldSummaryRow = Omit<MoldRow, 'parameters' | 'actions'> & Omit<MoldSummary, 'created_at' | 'updated_at'>;

const moldSummaryPage = statement<MoldSummaryRow, MoldFilter & OffsetWindow, MoldListShape>((q, values, shape) =>
  filteredMolds(q, values, shape)
    .orderBy([{ column: 'slug' }])
    .limit(values.limit)
    .offset(values.offset)
    .select(
      ...MOLD_HEADER_FIELDS,
      // Built in the database, so the configs (script text, request bodies) are never read.
      q.raw('jsonb_array_length(parameters) as parameter_count'),
      q.raw(
        `(select coalesce(jsonb_agg(jsonb_build_object('name', a->'name', 'type', a->'type') order by n), '[]')
              from jsonb_array_elements(actions) with ordinality as action(a, n)) as actions`,
      ),
    ),
);

const moldCount = statement<{ total: string }, MoldFilter, MoldListShape>((q, filter, shape) =>
  filteredMolds(q, filter, shape).count('* as total'),
);

export async function listMolds(
  trx: Knex,
  filter: MoldFilter,
  window: OffsetWindow,
): Promise<{ molds: MoldSummary[]; total: number }> {
  const shape = givenFilters(filter, FILTER_COLUMNS);
  const [rows, [{ total }]] = await Promise.all([
    moldSummaryPage.rows(trx, { ...filter, ...window }, shape),
    moldCount.rows(trx, filter, shape),
  ]);
  const molds = rows.map((row) => ({
    ...row,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  }));
  return { molds, total: Number(total) };
}

const publishedMoldsOfType = statement<
  Pick<MoldRow, 'id' | 'slug' | 'name' | 'description' | 'category' | 'icon'>,
  { entityType: EntityType; limit: number }
>((q, { entityType, limit }) =>
  q('molds')
    .where({ published: true })
    .whereRaw('entity_types @> array[?]::text[]', [entityType])
    .orderBy([{ column: 'name' }, { column: 'slug' }])
    .limit(limit)
    .select('id', 'slug', 'name', 'description', 'category', 'icon'),
);

/** Published molds that declare `entityType` among their entity types (an entity's quick actions), by name. */
export function publishedMoldsFor(trx: Knex, entityType: EntityType, limit: number) {
  return publishedMoldsOfType.rows(trx, { entityType, limit });
}

const moldBySlug = statement<MoldRow, { slug: string }>((q, { slug }) =>
  q('molds').where({ slug }).first(MOLD_COLUMNS),
);

export async function findMold(trx: Knex, slug: string): Promise<MoldRow | undefined> {
  return moldBySlug.first(trx, { slug });
}

/** Actions are stored with their defaults, so what a run copies is complete. */
const jsonColumns = (fields: { parameters?: readonly unknown[]; actions?: readonly MoldAction[] }) => ({
  ...(fields.parameters && { parameters: JSON.stringify(fields.parameters) }),
  ...(fields.actions && { actions: JSON.stringify(fields.actions.map(withActionDefaults)) }),
});

/** Returns undefined when the slug is already taken in this tenant. */
export async function insertMold(
  trx: Knex,
  tenantId: string,
  createdBy: string,
  mold: CreateMoldRequest,
): Promise<Mold | undefined> {
  const [row] = await trx('molds')
    .insert({ ...mold, ...jsonColumns(mold), tenant_id: tenantId, created_by: createdBy })
    .onConflict(['tenant_id', 'slug'])
    .ignore()
    .returning<MoldRow[]>(MOLD_COLUMNS);
  return row && toMold(row);
}

/** Any change bumps the version; runs already started keep the copy they took. */
export async function updateMold(trx: Knex, slug: string, changes: UpdateMoldRequest): Promise<Mold | undefined> {
  const [row] = await trx('molds')
    .where({ slug })
    .update({ ...changes, ...jsonColumns(changes), version: trx.raw('version + 1'), updated_at: trx.fn.now() })
    .returning<MoldRow[]>(MOLD_COLUMNS);
  return row && toMold(row);
}

/** Publication is not a change of the mold's content, so the version stays. */
export async function setPublished(trx: Knex, slug: string, published: boolean): Promise<Mold | undefined> {
  const [row] = await trx('molds')
    .where({ slug })
    .update({ published, updated_at: trx.fn.now() })
    .returning<MoldRow[]>(MOLD_COLUMNS);
  return row && toMold(row);
}

export async function deleteMold(trx: Knex, slug: string): Promise<boolean> {
  return (await trx('molds').where({ slug }).delete()) > 0;
}
