import { invalid } from '../errors';
import { slugify, UUID } from '../ids';
import {
  ENTITY_VIEW_FIELDS,
  type EntityInput,
  type EntityLink,
  type EntityReadme,
  type EntitySource,
  type EntityViewField,
  type RelationType,
} from './types';

// Pure decisions of entity writes: the derived service id, and which fields a write changes,
// as the changelog records them.

const SERVICE_ID_MAX = 63;

/** "Payments API (EU)" → "payments-api-eu", cut to a service id's 63 characters; '' when nothing is left. */
export const serviceIdFromName = (name: string): string => slugify(name).slice(0, SERVICE_ID_MAX).replace(/-+$/, '');

/** GET /entities/{id} reads a uuid as an id, so a service id must never look like one. */
export const isUsableServiceId = (serviceId: string) => serviceId !== '' && !UUID.test(serviceId);

/** A relation as it is compared and logged: its type and the target's service id. */
export interface RelationRef {
  type: RelationType;
  target: string;
}

/**
 * Every field an entity write can set; undefined = left as it is. A writer's input, with its
 * relations resolved to service ids and the writer's source.
 */
export interface EntityFields extends Partial<Omit<EntityInput, 'service_id' | 'relations'>> {
  source?: EntitySource;
  relations?: RelationRef[];
}

export type ChangedField = keyof EntityFields;

/** One changelog row: a field and its old and new value as text (arrays and objects as JSON). */
export interface FieldChange {
  field: ChangedField;
  oldValue: string | null;
  newValue: string | null;
}

/** A link with its keys in one order, so equal links are equal JSON (jsonb reorders keys). */
export const normalLink = (link: EntityLink): EntityLink =>
  link.icon === undefined
    ? { title: link.title, url: link.url }
    : { title: link.title, url: link.url, icon: link.icon };

const relationOrder = (a: RelationRef, b: RelationRef) =>
  a.type.localeCompare(b.type) || a.target.localeCompare(b.target);

/** The value as the changelog stores it; '' and [] count as empty (null) only where the field is nullable. */
function changelogValue(field: ChangedField, value: EntityFields[ChangedField]): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (field === 'links') return JSON.stringify((value as EntityLink[]).map(normalLink));
  if (field === 'relations') return JSON.stringify([...(value as RelationRef[])].sort(relationOrder));
  if (field === 'readme') {
    const readme = value as EntityReadme;
    return JSON.stringify({ content: readme.content, format: readme.format });
  }
  return JSON.stringify(value);
}

/**
 * The fields `next` sets to a value other than `current`'s, in the order of `next`. An
 * identical write has none, which makes it a no-op (no changelog, no audit, no timestamp bump).
 */
export function changedFields(current: Required<EntityFields>, next: EntityFields): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of Object.keys(next) as ChangedField[]) {
    if (next[field] === undefined) continue;
    const oldValue = changelogValue(field, current[field]);
    const newValue = changelogValue(field, next[field]);
    if (oldValue !== newValue) changes.push({ field, oldValue, newValue });
  }
  return changes;
}

/** The changelog rows of a new entity: each field it was created with, from nothing. */
export function initialFields(fields: Required<EntityFields>): FieldChange[] {
  return (Object.keys(fields) as ChangedField[])
    .map((field) => ({ field, oldValue: null, newValue: changelogValue(field, fields[field]) }))
    .filter((change) => change.newValue !== null && change.newValue !== '[]');
}

/**
 * The view fields a `fields=` list names, with `id` always first; every field when absent.
 * Names that are no field of an entity are a 400 naming them.
 */
export function selectedFields(list: string | undefined): readonly EntityViewField[] {
  if (list === undefined) return ENTITY_VIEW_FIELDS;
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(ENTITY_VIEW_FIELDS as readonly string[]).includes(name));
  if (unknown.length) {
    throw invalid(`Unknown fields: ${unknown.join(', ')}`, [
      {
        field: 'query.fields',
        message: `${unknown.join(', ')}: no such field (fields: ${ENTITY_VIEW_FIELDS.join(', ')})`,
      },
    ]);
  }
  return ['id', ...new Set(names.filter((name) => name !== 'id'))] as EntityViewField[];
}

/** A comma-separated tag list, without blanks and repeats. */
export const tagList = (list: string | undefined): string[] | undefined =>
  list === undefined
    ? undefined
    : [
        ...new Set(
          list
            .split(',')
            .map((tag) => tag.trim())
            .filter(Boolean),
        ),
      ];
