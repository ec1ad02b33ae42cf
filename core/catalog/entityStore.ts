import type { Knex } from 'knex';
import { idOr } from '../ids';
import { isoTimestamp } from '../timestamps';
import { statement } from '../../db/statements';
import { normalLink, type EntityFields } from './entityRules';
import {
  ENTITY_VIEW_FIELDS,
  type EntityLink,
  type EntityReadme,
  type EntityProjection,
  type EntityView,
  type EntityViewField,
  type ReadmeFormat,
} from './types';

// The entities table: every SQL statement that reads or writes an entity's own row.

const TIMESTAMPS = new Set<EntityViewField>(['last_activity_at', 'created_at', 'updated_at']);

/** The columns of an entity's view, qualified for queries that join (`e.`); timestamps as ISO text. */
export const entityColumns = (db: Knex, fields: readonly EntityViewField[] = ENTITY_VIEW_FIELDS) =>
  fields.map((field) => (TIMESTAMPS.has(field) ? isoTimestamp(db, `e.${field}`, field) : `e.${field}`));

/** Per field, how a column's value becomes the view's (the others are taken as read). */
const VIEW_VALUE: Partial<Record<EntityViewField, (value: never) => unknown>> = {
  links: (links: EntityLink[]) => links.map(normalLink),
};

/**
 * The view's `fields` of a row that holds at least their columns (GET /entities?fields=, whose
 * fields always include the id).
 */
export function projectEntity(row: Partial<EntityView>, fields: readonly EntityViewField[]): EntityProjection {
  const view: Record<string, unknown> = {};
  for (const field of fields) {
    const convert = VIEW_VALUE[field] as ((value: unknown) => unknown) | undefined;
    view[field] = convert ? convert(row[field]) : row[field];
  }
  return view as EntityProjection;
}

export const toEntityView = (row: EntityView) => projectEntity(row, ENTITY_VIEW_FIELDS) as EntityView;

/** The column a path's `{id}` names: a uuid is an id, anything else a service id. */
type RefColumn = 'e.id' | 'e.service_id';

const refColumn = (ref: string): RefColumn => `e.${idOr(ref, 'service_id')}`;

const entityByRef = statement<EntityView, { ref: string }, RefColumn>((q, { ref }, column) =>
  q('entities as e').where(column, ref).first(entityColumns(q)),
);

export async function getEntity(db: Knex, ref: string): Promise<EntityView | undefined> {
  const row = await entityByRef.first(db, { ref }, refColumn(ref));
  return row && toEntityView(row);
}

const entityIdByRef = statement<{ id: string }, { ref: string }, RefColumn>((q, { ref }, column) =>
  q('entities as e').where(column, ref).first('e.id'),
);

/** The entity's id, or undefined when the tenant has none by that id or service id. */
export async function entityIdOf(db: Knex, ref: string): Promise<string | undefined> {
  const row = await entityIdByRef.first(db, { ref }, refColumn(ref));
  return row?.id;
}

const lockedEntityByRef = statement<
  EntityView & { readme: string | null; readme_format: ReadmeFormat | null },
  { ref: string },
  RefColumn
>((q, { ref }, column) =>
  q('entities as e')
    .where(column, ref)
    .forUpdate()
    .first([...entityColumns(q), 'e.readme', 'e.readme_format']),
);

/** An entity with its README, locked until commit: what a write compares itself with. */
export async function lockEntity(
  db: Knex,
  ref: string,
): Promise<(EntityView & { readme: EntityReadme | null }) | undefined> {
  const row = await lockedEntityByRef.first(db, { ref }, refColumn(ref));
  if (!row) return undefined;
  const readme =
    row.readme === null || row.readme_format === null ? null : { content: row.readme, format: row.readme_format };
  return { ...toEntityView(row), readme };
}

const readmeByRef = statement<
  { readme: string | null; readme_format: ReadmeFormat | null },
  { ref: string },
  RefColumn
>((q, { ref }, column) => q('entities as e').where(column, ref).first('e.readme', 'e.readme_format'));

export async function getReadme(db: Knex, ref: string): Promise<EntityReadme | null | undefined> {
  const row = await readmeByRef.first(db, { ref }, refColumn(ref));
  if (!row) return undefined;
  return row.readme === null || row.readme_format === null ? null : { content: row.readme, format: row.readme_format };
}

/** The row's columns for the fields given (relations live in their own table). */
function writtenColumns(fields: EntityFields): Record<string, unknown> {
  const { readme, links, relations: _relations, ...plain } = fields;
  const columns: Record<string, unknown> = Object.fromEntries(
    Object.entries(plain).filter(([, value]) => value !== undefined),
  );
  // pg sends a JS array as a Postgres array; jsonb needs the JSON text.
  if (links !== undefined) columns.links = JSON.stringify(links.map(normalLink));
  if (readme !== undefined) {
    columns.readme = readme?.content ?? null;
    columns.readme_format = readme?.format ?? null;
  }
  return columns;
}

/**
 * Holds the service id until commit, so concurrent upserts of one service id run one after the
 * other (the second then finds the first's entity) instead of both inserting.
 */
export async function lockServiceId(db: Knex, tenantId: string, serviceId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtext(?))', [`entity:${tenantId}:${serviceId}`]);
}

/** Inserts an entity; undefined when its service id is taken in this tenant. */
export async function insertEntity(
  db: Knex,
  tenantId: string,
  serviceId: string,
  fields: Required<Omit<EntityFields, 'relations'>>,
): Promise<EntityView | undefined> {
  const [row]: EntityView[] = await db('entities as e')
    .insert({ tenant_id: tenantId, service_id: serviceId, ...writtenColumns(fields) })
    .onConflict(['tenant_id', 'service_id'])
    .ignore()
    .returning(entityColumns(db));
  return row && toEntityView(row);
}

/** Writes the fields given and marks the entity active now. */
export async function updateEntity(db: Knex, id: string, fields: EntityFields): Promise<EntityView> {
  const [row]: EntityView[] = await db('entities as e')
    .where({ id })
    .update({ ...writtenColumns(fields), updated_at: db.fn.now(), last_activity_at: db.fn.now() })
    .returning(entityColumns(db));
  return toEntityView(row);
}

/** Deletes the entity; its relations (both ends), changelog and manifest go with it (cascade). */
export async function deleteEntity(db: Knex, ref: string): Promise<EntityView | undefined> {
  const [row]: EntityView[] = await db('entities as e').where(refColumn(ref), ref).del().returning(entityColumns(db));
  return row && toEntityView(row);
}
