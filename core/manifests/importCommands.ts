import type { Knex } from 'knex';
import type { Principal } from '../auth/principal';
import { upsertEntity } from '../catalog/entityCommands';
import { resolveEntityRefs } from '../catalog/relationStore';
import type { EntityInput, ManifestType } from '../catalog/types';
import { ApiError, conflict } from '../errors';
import { entityInputOf as entityInputFromManifest } from './format';
import { applyDocument, notesOfRefusal, serviceIdOf, type Accepted } from './commands';
import { relationRefusals, writeOrder, type ImportedEntity } from './importRules';
import { documentSummary, locateIn } from './manifestRules';
import type { ApplyResult, ReadDocument, SourceNote } from './types';

// Import: many documents in one transaction, each applied or rejected on its own. What would
// reject a document (a duplicate service_id, a relation to nothing) is decided in memory first
// (importRules.ts), with one read of the stored entities the relations name; then every
// accepted document is written once, entities before the relations that need them.

export interface ImportedDocument {
  index: number;
  line: number;
  format: ManifestType;
  kind: string | null;
  service_id: string | null;
  result: ApplyResult;
  entity_id: string | null;
  manifest_id: string | null;
  problems: SourceNote[];
  warnings: SourceNote[];
}

export interface ImportReport {
  created: number;
  updated: number;
  skipped: number;
  rejected: number;
  documents: ImportedDocument[];
}

type Applied = Awaited<ReturnType<typeof applyDocument>>;
type Input = EntityInput & { service_id: string };

/** The accepted documents' entities, one per service_id; a later document declaring one again is rejected. */
function entitiesOf(documents: ReadDocument[], rejected: Map<number, SourceNote[]>): Map<number, Input> {
  const inputs = new Map<number, Input>();
  const declaredBy = new Map<string, number>();
  for (const document of documents) {
    if (document.outcome === 'rejected') rejected.set(document.index, document.problems);
    if (!document.manifest) continue;
    const input = entityInputOf(document as Accepted);
    const first = declaredBy.get(input.service_id);
    if (first !== undefined) {
      const field = document.manifest.metadata.service_id ? 'service_id' : 'name';
      const where = locateIn(document.positions)(['metadata', field]);
      const message = `service_id "${input.service_id}" is declared by document ${first} of this import already`;
      rejected.set(document.index, [{ path: 'metadata.service_id', ...where, message }]);
      continue;
    }
    declaredBy.set(input.service_id, document.index);
    inputs.set(document.index, input);
  }
  return inputs;
}

/**
 * Applies the documents in the caller's transaction. A relation may name any document of the
 * import, in any order: documents are written targets first, each once; only documents in a
 * cycle of relations are written without them first and get them once every entity exists.
 * Nothing is retried: a write refused after the checks means the catalog changed under the
 * import (an entity deleted meanwhile), a 409.
 */
export async function importManifests(db: Knex, by: Principal, documents: ReadDocument[]): Promise<ImportReport> {
  const rejected = new Map<number, SourceNote[]>();
  const inputs = entitiesOf(documents, rejected);
  const entities: ImportedEntity[] = [...inputs].map(([index, input]) => ({
    index,
    serviceId: input.service_id,
    relations: input.relations ?? [],
  }));
  const targets = new Set(entities.flatMap((entity) => entity.relations.map((relation) => relation.target)));
  const stored = new Map([...(await resolveEntityRefs(db, [...targets]))].map(([ref, e]) => [ref, e.service_id]));
  for (const [index, details] of relationRefusals(entities, stored)) {
    rejected.set(index, notesOfRefusal(details, documents[index]));
  }

  const { ordered, cyclic } = writeOrder(entities, new Set(rejected.keys()));
  const applied = new Map<number, Applied>();
  const write = async (index: number, input: EntityInput) =>
    applied.set(index, await applyDocument(db, by, documents[index] as Accepted, input));
  try {
    for (const index of ordered) await write(index, inputs.get(index) as Input);
    for (const index of cyclic) await write(index, { ...(inputs.get(index) as Input), relations: undefined });
    for (const index of cyclic) await upsertEntity(db, by, inputs.get(index) as Input, 'manifest');
  } catch (err) {
    if (err instanceof ApiError && err.code === 'INVALID_REQUEST') {
      throw conflict(`The catalog changed while the import was applied (${err.message}); send it again`);
    }
    throw err;
  }
  return importReport(documents, applied, rejected);
}

function entityInputOf(document: Accepted): Input {
  const input = entityInputFromManifest(document.manifest);
  return { ...input, service_id: serviceIdOf(input) };
}

function importReport(
  documents: ReadDocument[],
  applied: Map<number, Applied>,
  rejected: Map<number, SourceNote[]>,
): ImportReport {
  const report: ImportReport = { created: 0, updated: 0, skipped: 0, rejected: 0, documents: [] };
  for (const document of documents) {
    const done = applied.get(document.index);
    const result: ApplyResult = done ? done.result : document.outcome === 'skipped' ? 'skipped' : 'rejected';
    report[result] += 1;
    report.documents.push({
      ...documentSummary(document),
      service_id: done?.entity.service_id ?? document.service_id,
      result,
      entity_id: done?.entity.id ?? null,
      manifest_id: done?.manifest.id ?? null,
      problems: rejected.get(document.index) ?? [],
      warnings: document.warnings,
    });
  }
  return report;
}
