import type { Knex } from 'knex';
import { actorOf, recordAudit } from '../audit/store';
import type { Principal } from '../auth/principal';
import { conflict, invalid, notFound, type ErrorDetail } from '../errors';
import { enforceEntityOwner } from '../policies/enforcement';
import type { TenantPolicies } from '../policies/reader';
import { appendChangelog } from './changelogStore';
import {
  changedFields,
  initialFields,
  isUsableServiceId,
  serviceIdFromName,
  type EntityFields,
  type FieldChange,
  type RelationRef,
} from './entityRules';
import { refreshLinkedEntityBusFactor } from '../insights/busFactorCommands';
import { deleteEntity, getEntity, insertEntity, lockEntity, lockServiceId, updateEntity } from './entityStore';
import { outgoingRelationRefs, replaceOutgoingRelations, resolveEntityRefs } from './relationStore';
import type { EntityChange, EntityInput, EntitySource, EntityView, RelationInput, RelationType } from './types';
import { recordEvent } from '../webhooks/events';

// Every entity write, whoever makes it (the API, manifests, agents, the crawler): each appends
// one changelog row per changed field and an audit entry, and bumps updated_at and
// last_activity_at, in the caller's transaction. Later writers of the catalog (the search
// outbox) hook in here, so no entity is written anywhere else.

type EntityEvent = 'entity.created' | 'entity.updated' | 'entity.deleted';

const ACTIONS: Record<EntityEvent, string> = {
  'entity.created': 'create',
  'entity.updated': 'update',
  'entity.deleted': 'delete',
};

const audited = (
  db: Knex,
  by: Principal,
  entityId: string,
  eventType: EntityEvent,
  metadata: Record<string, unknown>,
) => recordAudit(db, by, { eventType, action: ACTIONS[eventType], targetType: 'entity', targetId: entityId, metadata });

/** The service id a write names: given, or derived from the name; 400 when unusable. */
function serviceIdOf(input: EntityInput): string {
  const serviceId = input.service_id ?? serviceIdFromName(input.name);
  if (isUsableServiceId(serviceId)) return serviceId;
  throw invalid(
    input.service_id ? 'service_id must not look like a uuid' : 'No service_id can be derived from this name; send one',
    [{ field: 'body.service_id', message: 'is not usable' }],
  );
}

interface ResolvedRelation {
  type: RelationType;
  toId: string;
  ref: RelationRef;
}

/** The relations' targets in this tenant; 400 naming every target that is unknown or the entity itself. */
async function resolveRelations(
  db: Knex,
  relations: RelationInput[],
  self: { id?: string; serviceId: string },
): Promise<ResolvedRelation[]> {
  const targets = await resolveEntityRefs(db, [...new Set(relations.map((r) => r.target))]);
  const details: ErrorDetail[] = [];
  const resolved = relations.flatMap((relation, i) => {
    const target = targets.get(relation.target);
    const field = `body.relations[${i}].target`;
    if (relation.target === self.serviceId || (target && target.id === self.id)) {
      details.push({ field, message: 'an entity cannot relate to itself' });
      return [];
    }
    if (!target) {
      details.push({ field, message: `no entity "${relation.target}" in this tenant` });
      return [];
    }
    return [{ type: relation.type, toId: target.id, ref: { type: relation.type, target: target.service_id } }];
  });
  if (details.length) throw invalid('Relations name entities that cannot be related', details);
  return resolved;
}

/** The fields an input sets (everything but the service id and relations). */
const inputFields = (input: EntityInput): EntityFields => ({
  name: input.name,
  type: input.type,
  lifecycle: input.lifecycle,
  owner: input.owner,
  description: input.description,
  tier: input.tier,
  tags: input.tags,
  links: input.links,
  readme: input.readme,
});

/**
 * `policies`: the tenant's, for a write through the entity API (entity_requires_owner applies);
 * manifests, agents and the crawler pass none: they are exempt (docs/administration.md).
 */
export async function createEntity(
  db: Knex,
  by: Principal,
  input: EntityInput,
  source: EntitySource,
  policies?: TenantPolicies,
): Promise<EntityView> {
  if (policies) enforceEntityOwner(policies, input.owner);
  const serviceId = serviceIdOf(input);
  const relations = await resolveRelations(db, input.relations ?? [], { serviceId });
  const fields = {
    name: input.name,
    type: input.type,
    lifecycle: input.lifecycle ?? null,
    owner: input.owner ?? null,
    description: input.description ?? null,
    tier: input.tier ?? null,
    tags: input.tags ?? [],
    links: input.links ?? [],
    source,
    readme: input.readme ?? null,
  };
  const entity = await insertEntity(db, by.tenantId, serviceId, fields);
  if (!entity) throw conflict(`An entity with service_id "${serviceId}" already exists`);
  await replaceOutgoingRelations(db, by.tenantId, entity.id, relations);
  if (fields.links.length) await refreshLinkedEntityBusFactor(db, by.tenantId, entity);
  const changes = initialFields({ ...fields, relations: relations.map((r) => r.ref) });
  await appendChangelog(db, by.tenantId, entity.id, actorOf(by).actor, 'created', changes);
  await audited(db, by, entity.id, 'entity.created', { service_id: serviceId, name: entity.name, source });
  await recordEvent(db, by.tenantId, 'entity.created', { entity });
  return entity;
}

/**
 * Writes `next` over the locked entity `ref`: only what differs is written and logged. `relations`,
 * when given, replace the outgoing ones. Nothing differs: no write at all.
 */
async function applyFields(
  db: Knex,
  by: Principal,
  ref: string,
  next: EntityFields,
  relations?: RelationInput[],
  policies?: TenantPolicies,
): Promise<EntityView> {
  const current = await lockEntity(db, ref);
  if (!current) throw notFound('Entity');
  if (policies) enforceEntityOwner(policies, next.owner === undefined ? current.owner : next.owner);
  const { readme, ...view } = current;
  const resolved = relations && (await resolveRelations(db, relations, { id: view.id, serviceId: view.service_id }));
  const currentRelations = resolved ? await outgoingRelationRefs(db, view.id) : [];
  const changes: FieldChange[] = changedFields(
    { ...view, readme, relations: currentRelations },
    { ...next, relations: resolved?.map((r) => r.ref) },
  );
  if (!changes.length) return view;
  const { relations: _relations, ...columns } = next;
  const entity = await updateEntity(db, view.id, columns);
  if (resolved && changes.some((change) => change.field === 'relations')) {
    await replaceOutgoingRelations(db, by.tenantId, view.id, resolved);
  }
  if (changes.some((change) => change.field === 'links')) await refreshLinkedEntityBusFactor(db, by.tenantId, entity);
  await appendChangelog(db, by.tenantId, view.id, actorOf(by).actor, 'updated', changes);
  await audited(db, by, view.id, 'entity.updated', {
    service_id: view.service_id,
    fields: changes.map((change) => change.field),
  });
  await recordEvent(db, by.tenantId, 'entity.updated', { entity, fields: changes.map((change) => change.field) });
  return entity;
}

/**
 * A partial update (the spec's EntityUpdate) through the entity API, under the tenant's
 * `policies` (entity_requires_owner: the entity must have an owner once updated). 404 when unknown.
 */
export function changeEntity(
  db: Knex,
  by: Principal,
  idOrServiceId: string,
  change: EntityChange,
  policies: TenantPolicies,
): Promise<EntityView> {
  return applyFields(db, by, idOrServiceId, change, undefined, policies);
}

/**
 * By service id (given or derived from the name): creates the entity, or replaces the fields
 * the input gives (relations too, when given) and takes `source`. Repeating it writes nothing.
 */
export async function upsertEntity(
  db: Knex,
  by: Principal,
  input: EntityInput,
  source: EntitySource,
): Promise<{ entity: EntityView; created: boolean }> {
  const serviceId = serviceIdOf(input);
  await lockServiceId(db, by.tenantId, serviceId);
  if (!(await getEntity(db, serviceId))) return { entity: await createEntity(db, by, input, source), created: true };
  const entity = await applyFields(db, by, serviceId, { ...inputFields(input), source }, input.relations);
  return { entity, created: false };
}

/** Deletes the entity with its relations (both ends), changelog and manifest. 404 when unknown. */
export async function removeEntity(db: Knex, by: Principal, idOrServiceId: string): Promise<void> {
  const entity = await deleteEntity(db, idOrServiceId);
  if (!entity) throw notFound('Entity');
  await audited(db, by, entity.id, 'entity.deleted', { service_id: entity.service_id, name: entity.name });
  await recordEvent(db, by.tenantId, 'entity.deleted', {
    entity: { id: entity.id, service_id: entity.service_id, name: entity.name },
  });
}

export const findEntity = (db: Knex, idOrServiceId: string): Promise<EntityView | undefined> =>
  getEntity(db, idOrServiceId);
