import type { Knex } from 'knex';
import { recordAudit } from '../audit/store';
import type { Principal } from '../auth/principal';
import { findEntity, removeEntity, upsertEntity } from '../catalog/entityCommands';
import { serviceIdFromName } from '../catalog/entityRules';
import { getReadme } from '../catalog/entityStore';
import { outgoingRelationRefs } from '../catalog/relationStore';
import type { EntityInput, EntityView, ManifestType } from '../catalog/types';
import { ApiError, invalid, notFound } from '../errors';
import { entityInputOf, manifestOfEntity, pathText, renderYaml } from './format';
import { declaredServiceId, readManifestDocuments } from './manifestRules';
import { getManifest, saveManifest, type ManifestView } from './store';
import type { ApplyResult, Manifest, ManifestDocument, ManifestPath, SourceNote } from './types';

// Writing manifests: each declares one entity, written through the catalog's upsertEntity
// (source `manifest`) with its manifest row, in the caller's transaction.

/** The most documents one import applies. */
export const MAX_IMPORT_DOCUMENTS = 500;

export interface ManifestBody {
  content: string;
  format?: ManifestType;
}

export interface AppliedManifest {
  result: 'created' | 'updated';
  manifest: ManifestView;
  entity: EntityView;
  warnings: SourceNote[];
}

type Accepted = ManifestDocument & { manifest: Manifest };

/** Where each field of an entity write is written in a manifest. */
const ENTITY_FIELD_PATHS: Record<string, ManifestPath> = {
  service_id: ['metadata', 'service_id'],
  name: ['metadata', 'name'],
  description: ['metadata', 'description'],
  tags: ['metadata', 'tags'],
  links: ['metadata', 'links'],
  type: ['spec', 'type'],
  lifecycle: ['spec', 'lifecycle'],
  owner: ['spec', 'owner'],
  tier: ['spec', 'tier'],
  relations: ['spec', 'relations'],
  readme: ['spec', 'readme'],
};

/** An entity write's refusal (`body.relations[0].target: no entity "x"`) at its place in the document. */
function notesOfRefusal(err: ApiError, document: ManifestDocument): SourceNote[] {
  const details = err.details.length ? err.details : [{ field: undefined, message: err.message }];
  return details.map(({ field, message }) => {
    const [first, ...rest] = (field ?? '')
      .replace(/^body\.?/, '')
      .split(/[.[\]]/)
      .filter(Boolean)
      .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
    const path = first !== undefined && ENTITY_FIELD_PATHS[first] ? [...ENTITY_FIELD_PATHS[first], ...rest] : [];
    return { path: pathText(path), ...document.locate(path), message };
  });
}

/** The 400 of a refused document: each problem as `body.content.<path>` with its line and column. */
function refused(message: string, notes: SourceNote[]): ApiError {
  return invalid(
    `${message} (POST /manifests/validate lists every problem with its line and column)`,
    notes.map((note) => ({
      field: note.path ? `body.content.${note.path}` : 'body.content',
      message: `line ${note.line}, column ${note.column}: ${note.message}`,
    })),
  );
}

/** The one document a create or update applies; a 400 for none, several, a skipped kind or problems. */
function singleDocument(body: ManifestBody): Accepted {
  const documents = readManifestDocuments(body.content, body.format);
  if (documents.length !== 1) {
    throw invalid(
      documents.length
        ? `content holds ${documents.length} documents; POST /manifests/import applies several`
        : 'content holds no YAML document',
      [{ field: 'body.content', message: 'must hold exactly one document' }],
    );
  }
  const [document] = documents;
  if (document.outcome === 'skipped') throw refused('The document declares no entity', document.warnings);
  if (document.outcome === 'rejected' || !document.manifest)
    throw refused('The manifest is not valid', document.problems);
  return document as Accepted;
}

const serviceIdOf = (input: EntityInput) => input.service_id ?? serviceIdFromName(input.name);

/** Writes the entity and the manifest row; an entity write's refusal is thrown as it came. */
async function applyDocument(db: Knex, by: Principal, document: Accepted, input: EntityInput) {
  const { entity, created } = await upsertEntity(db, by, input, 'manifest');
  const { manifest, change } = await saveManifest(db, by.tenantId, {
    entity_id: entity.id,
    service_id: entity.service_id,
    manifest_type: document.format,
    content: document.source,
  });
  if (change !== 'unchanged') {
    await recordAudit(db, by, {
      eventType: `manifest.${change}`,
      action: change === 'created' ? 'create' : 'update',
      targetType: 'manifest',
      targetId: manifest.id,
      metadata: { service_id: manifest.service_id, manifest_type: manifest.manifest_type },
    });
  }
  return { result: created ? ('created' as const) : ('updated' as const), entity, manifest };
}

async function applySingle(db: Knex, by: Principal, document: Accepted, input: EntityInput): Promise<AppliedManifest> {
  try {
    return { ...(await applyDocument(db, by, document, input)), warnings: document.warnings };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'INVALID_REQUEST') {
      throw refused('The manifest cannot be applied', notesOfRefusal(err, document));
    }
    throw err;
  }
}

/** Creates or updates the entity the manifest declares (by service_id): applying it twice writes nothing new. */
export function createManifest(db: Knex, by: Principal, body: ManifestBody): Promise<AppliedManifest> {
  const document = singleDocument(body);
  return applySingle(db, by, document, entityInputOf(document.manifest));
}

/** Replaces a manifest; its document must declare the same service_id (or none: the manifest's is kept). */
export async function updateManifest(
  db: Knex,
  by: Principal,
  ref: string,
  body: ManifestBody,
): Promise<AppliedManifest> {
  const stored = await getManifest(db, ref);
  if (!stored) throw notFound('Manifest');
  const document = singleDocument(body);
  const input = entityInputOf(document.manifest);
  const declared = input.service_id ?? stored.service_id;
  if (declared !== stored.service_id) {
    const path = ['metadata', document.format === 'backstage' ? 'name' : 'service_id'];
    throw refused('A manifest keeps its service_id', [
      {
        path: pathText(['metadata', 'service_id']),
        ...document.locate(path),
        message: `is "${declared}" but this manifest declares "${stored.service_id}"; create a new manifest instead`,
      },
    ]);
  }
  return applySingle(db, by, document, { ...input, service_id: declared });
}

/** Deletes the manifest and the entity it declares (with its relations and changelog). */
export async function deleteManifest(db: Knex, by: Principal, ref: string): Promise<void> {
  const stored = await getManifest(db, ref);
  if (!stored) throw notFound('Manifest');
  await removeEntity(db, by, stored.entity_id);
  await recordAudit(db, by, {
    eventType: 'manifest.deleted',
    action: 'delete',
    targetType: 'manifest',
    targetId: stored.id,
    metadata: { service_id: stored.service_id, manifest_type: stored.manifest_type },
  });
}

/** The entity as a manifest of our format (YAML), from its current state; undefined when there is no such entity. */
export async function entityManifestYaml(db: Knex, ref: string): Promise<string | undefined> {
  const entity = await findEntity(db, ref);
  if (!entity) return undefined;
  const readme = (await getReadme(db, entity.id)) ?? null;
  const relations = await outgoingRelationRefs(db, entity.id);
  return renderYaml([manifestOfEntity(entity, readme, relations)]);
}

// ---------------------------------------------------------------------------------------------
// Import: many documents, one transaction, each document applied or rejected on its own
// ---------------------------------------------------------------------------------------------

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

/** Thrown to roll an import attempt back to its savepoint. */
const RETRY = Symbol('retry import');

/** Runs `work` in a savepoint; a refusal rolls back to it and comes back as the document's problems. */
async function inSavepoint<T>(
  db: Knex,
  document: ManifestDocument,
  work: (trx: Knex.Transaction) => Promise<T>,
): Promise<T | { problems: SourceNote[] }> {
  try {
    return await db.transaction(work);
  } catch (err) {
    if (err instanceof ApiError) return { problems: notesOfRefusal(err, document) };
    throw err;
  }
}

const isRefusal = (value: unknown): value is { problems: SourceNote[] } =>
  typeof value === 'object' && value !== null && 'problems' in value;

/** The documents of an import, read (nothing is written); a 400 beyond MAX_IMPORT_DOCUMENTS. */
export function readImport(body: ManifestBody): ManifestDocument[] {
  const documents = readManifestDocuments(body.content, body.format);
  if (documents.length > MAX_IMPORT_DOCUMENTS) {
    throw invalid(`An import applies at most ${MAX_IMPORT_DOCUMENTS} documents; this one has ${documents.length}`, [
      { field: 'body.content', message: `must hold at most ${MAX_IMPORT_DOCUMENTS} documents` },
    ]);
  }
  return documents;
}

/**
 * Applies the documents (`readImport`) in the caller's transaction: each in a savepoint, so a bad
 * one rejects only itself. Entities come first and relations second, so a relation may name a
 * document later in the stream. A document whose relations then fail had its entity written
 * already: the attempt is rolled back and run again without it (each run rejects at least one
 * more document, so this ends; when nothing fails, as usual, it runs once).
 */
export async function importManifests(db: Knex, by: Principal, documents: ManifestDocument[]): Promise<ImportReport> {
  const rejected = new Map<number, SourceNote[]>();
  const inputs = new Map<number, EntityInput & { service_id: string }>();
  const declaredBy = new Map<string, number>();
  for (const document of documents) {
    if (document.outcome === 'rejected') rejected.set(document.index, document.problems);
    if (!document.manifest) continue;
    const input = entityInputOf(document.manifest);
    const serviceId = serviceIdOf(input);
    const first = declaredBy.get(serviceId);
    if (first !== undefined) {
      const where = document.locate(['metadata', document.manifest.metadata.service_id ? 'service_id' : 'name']);
      const message = `service_id "${serviceId}" is declared by document ${first} of this import already`;
      rejected.set(document.index, [{ path: 'metadata.service_id', ...where, message }]);
      continue;
    }
    declaredBy.set(serviceId, document.index);
    inputs.set(document.index, { ...input, service_id: serviceId });
  }

  for (;;) {
    const applied = new Map<number, Applied>();
    const retry = await db
      .transaction(async (attempt) => {
        const late: number[] = [];
        for (const [index, input] of inputs) {
          if (rejected.has(index)) continue;
          const document = documents[index] as Accepted;
          // Relations wait for the second pass, when every entity of the import exists.
          const entityOnly = input.relations?.length ? { ...input, relations: undefined } : input;
          const outcome = await inSavepoint(attempt, document, (trx) => applyDocument(trx, by, document, entityOnly));
          if (isRefusal(outcome)) rejected.set(index, outcome.problems);
          else applied.set(index, outcome);
        }
        for (const [index, input] of inputs) {
          if (!applied.has(index) || !input.relations?.length) continue;
          const outcome = await inSavepoint(attempt, documents[index], (trx) =>
            upsertEntity(trx, by, input, 'manifest'),
          );
          if (isRefusal(outcome)) {
            rejected.set(index, outcome.problems);
            late.push(index);
          }
        }
        if (late.length) throw RETRY;
      })
      .then(
        () => false,
        (err: unknown) => {
          if (err === RETRY) return true;
          throw err;
        },
      );
    if (!retry) return importReport(documents, applied, rejected);
  }
}

function importReport(
  documents: ManifestDocument[],
  applied: Map<number, Applied>,
  rejected: Map<number, SourceNote[]>,
): ImportReport {
  const report: ImportReport = { created: 0, updated: 0, skipped: 0, rejected: 0, documents: [] };
  for (const document of documents) {
    const done = applied.get(document.index);
    const problems = rejected.get(document.index) ?? [];
    const result: ApplyResult = done ? done.result : document.outcome === 'skipped' ? 'skipped' : 'rejected';
    report[result] += 1;
    report.documents.push({
      index: document.index,
      line: document.line,
      format: document.format,
      kind: document.kind ?? null,
      service_id: done?.entity.service_id ?? declaredServiceId(document),
      result,
      entity_id: done?.entity.id ?? null,
      manifest_id: done?.manifest.id ?? null,
      problems,
      warnings: document.warnings,
    });
  }
  return report;
}
