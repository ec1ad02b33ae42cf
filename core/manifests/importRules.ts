import type { ErrorDetail } from '../errors';
import type { RelationInput } from '../catalog/types';

// Which documents of an import its relations reject, decided in memory before anything is
// written: a relation names another document of the import, an entity already stored, or
// nothing. A document rejected takes with it every document that needed it, transitively (one
// pass over the relations, however long the chain), unless what it names is already stored.

export interface ImportedEntity {
  index: number;
  serviceId: string;
  relations: readonly RelationInput[];
}

const field = (i: number) => `body.relations[${i}].target`;
const unknownTarget = (target: string) => `no entity "${target}" in this tenant`;

/**
 * Per document index, why its relations cannot be written (the entity API's words and fields).
 * `stored`: the service_id of each target that names a stored entity (by service_id or id).
 */
export function relationRefusals(
  entities: readonly ImportedEntity[],
  stored: ReadonlyMap<string, string>,
): Map<number, ErrorDetail[]> {
  const declared = new Map(entities.map((entity) => [entity.serviceId, entity.index]));
  const refusals = new Map<number, ErrorDetail[]>();
  /** Per document, the relations of other documents that name it: `[index, relation position, target]`. */
  const neededBy = new Map<number, [number, number, string][]>();
  for (const { index, serviceId, relations } of entities) {
    const details: ErrorDetail[] = [];
    relations.forEach(({ target }, i) => {
      const declaredBy = declared.get(target);
      if (target === serviceId || stored.get(target) === serviceId) {
        details.push({ field: field(i), message: 'an entity cannot relate to itself' });
      } else if (declaredBy !== undefined) {
        const needs = neededBy.get(declaredBy) ?? [];
        needs.push([index, i, target]);
        neededBy.set(declaredBy, needs);
      } else if (!stored.has(target)) {
        details.push({ field: field(i), message: unknownTarget(target) });
      }
    });
    if (details.length) refusals.set(index, details);
  }
  const pending = [...refusals.keys()];
  for (let rejected = pending.pop(); rejected !== undefined; rejected = pending.pop()) {
    for (const [index, i, target] of neededBy.get(rejected) ?? []) {
      if (refusals.has(index) || stored.has(target)) continue;
      refusals.set(index, [{ field: field(i), message: unknownTarget(target) }]);
      pending.push(index);
    }
  }
  return refusals;
}

/**
 * The order to write an import's entities in so that each relation's target exists before the
 * relation: `ordered` are written whole, targets first; `cyclic` (a cycle of relations, or
 * needing one) are written without relations after them, and get their relations once all exist.
 * A relation to a refused document relates to the stored entity, so it orders nothing.
 */
export function writeOrder(
  entities: readonly ImportedEntity[],
  refused: ReadonlySet<number>,
): { ordered: number[]; cyclic: number[] } {
  const written = entities.filter((entity) => !refused.has(entity.index));
  const declared = new Map(written.map((entity) => [entity.serviceId, entity.index]));
  /** Per document, how many documents it still waits for, and who waits for it. */
  const waitsFor = new Map<number, number>();
  const awaitedBy = new Map<number, number[]>();
  for (const { index, relations } of written) {
    const targets = new Set(relations.flatMap(({ target }) => declared.get(target) ?? []));
    targets.delete(index);
    waitsFor.set(index, targets.size);
    for (const target of targets) {
      const waiting = awaitedBy.get(target) ?? [];
      waiting.push(index);
      awaitedBy.set(target, waiting);
    }
  }
  const ordered = written.filter(({ index }) => waitsFor.get(index) === 0).map(({ index }) => index);
  for (let i = 0; i < ordered.length; i++) {
    for (const waiting of awaitedBy.get(ordered[i]) ?? []) {
      const left = (waitsFor.get(waiting) ?? 0) - 1;
      waitsFor.set(waiting, left);
      if (left === 0) ordered.push(waiting);
    }
  }
  const done = new Set(ordered);
  return { ordered, cyclic: written.filter(({ index }) => !done.has(index)).map(({ index }) => index) };
}
