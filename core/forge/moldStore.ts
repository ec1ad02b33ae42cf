import type { Knex } from 'knex';
import type { OffsetWindow } from '../paging';
import type { CreateMoldRequest, MoldAction, MoldParameter, UpdateMoldRequest } from './types';

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
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export type Mold = ReturnType<typeof toMold>;

export function toMold(row: MoldRow) {
  return {
    ...row,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export interface MoldFilter {
  category?: string;
  /** Which publication states to include. */
  published?: boolean;
}

export async function listMolds(
  trx: Knex,
  filter: MoldFilter,
  window: OffsetWindow,
): Promise<{ molds: Mold[]; total: number }> {
  const query = trx('molds').modify((q) => {
    if (filter.category !== undefined) q.where({ category: filter.category });
    if (filter.published !== undefined) q.where({ published: filter.published });
  });
  const [rows, [{ total }]] = await Promise.all([
    query
      .clone()
      .orderBy([{ column: 'slug' }])
      .limit(window.limit)
      .offset(window.offset)
      .select<MoldRow[]>('*'),
    query.clone().count<{ total: string }[]>('* as total'),
  ]);
  return { molds: rows.map(toMold), total: Number(total) };
}

export async function findMold(trx: Knex, slug: string): Promise<MoldRow | undefined> {
  return trx('molds').where({ slug }).first<MoldRow>();
}

const jsonColumns = (fields: { parameters?: readonly unknown[]; actions?: readonly unknown[] }) => ({
  ...(fields.parameters && { parameters: JSON.stringify(fields.parameters) }),
  ...(fields.actions && { actions: JSON.stringify(fields.actions) }),
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
    .returning<MoldRow[]>('*');
  return row && toMold(row);
}

/** Any change bumps the version; runs already started keep the copy they took. */
export async function updateMold(trx: Knex, slug: string, changes: UpdateMoldRequest): Promise<Mold | undefined> {
  const [row] = await trx('molds')
    .where({ slug })
    .update({ ...changes, ...jsonColumns(changes), version: trx.raw('version + 1'), updated_at: trx.fn.now() })
    .returning<MoldRow[]>('*');
  return row && toMold(row);
}

/** Publication is not a change of the mold's content, so the version stays. */
export async function setPublished(trx: Knex, slug: string, published: boolean): Promise<Mold | undefined> {
  const [row] = await trx('molds')
    .where({ slug })
    .update({ published, updated_at: trx.fn.now() })
    .returning<MoldRow[]>('*');
  return row && toMold(row);
}

export async function deleteMold(trx: Knex, slug: string): Promise<boolean> {
  return (await trx('molds').where({ slug }).delete()) > 0;
}
