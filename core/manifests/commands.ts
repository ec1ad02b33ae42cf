import type { Knex } from 'knex';
import { recordAudit } from '../audit/store';
import type { Principal } from '../auth/principal';
import { findEntity, removeEntity, upsertEntity } from '../catalog/entityCommands';
import { serviceIdFromName } from '../catalog/entityRules';
import { getReadme } from '../catalog/entityStore';
import { outgoingRelationRefs } from '../catalog/relationStore';
import type { EntityInput, EntityView } from '../catalog/types';
import { ApiError, invalid, notFound, type ErrorDetail } from '../errors';
import { entityInputOf, manifestOfEntity, pathText, renderYaml } from './format';
import { ENTITY_FIELD_PATHS, locateIn } from './manifestRules';
import { getManifest, saveManifest, type ManifestView } from './store';
import type { Manifest, ReadDocument, SourceNote } from './types';

// Writing manifests: each declares one entity, written through the catalog's upsertEntity
// (source `manifest`) with its manifest row, in the caller's transaction. The documents come
// read already (readPool.ts): no YAML is parsed here, and no transaction is held while it is.

export interface AppliedManifest {
  result: 'created' | 'updated';
  manifest: ManifestView;
  entity: EntityView;
  warnings: SourceNote[];
}

export type Accepted = ReadDocument & { manifest: Manifest };

/** An entity write's refusal (`body.relations[0].target: no entity "x"`) at its place in the document. */
export function notesOfRefusal(details: ErrorDetail[], document: ReadDocument): SourceNote[] {
  const locate = locateIn(document.positions);
  return details.map(({ field, message }) => {
    const [first, ...rest] = (field ?? '')
      .replace(/^body\.?/, '')
      .split(/[.[\]]/)
      .filter(Boolean)
      .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
    const path = first !== undefined && ENTITY_FIELD_PATHS[first] ? [...ENTITY_FIELD_PATHS[first], ...rest] : [];
    return { path: pathText(path), ...locate(path), message };
  });
}

const detailsOf = (err: ApiError): ErrorDetail[] =>
  err.details.length ? err.details : [{ field: undefined, message: err.message }];

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
function singleDocument(documents: ReadDocument[]): Accepted {
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

export const serviceIdOf = (input: EntityInput) => input.service_id ?? serviceIdFromName(input.name);

/** Writes the entity and the manifest row; an entity write's refusal is thrown as it came. */
export async function applyDocument(db: Knex, by: Principal, document: Accepted, input: EntityInput) {
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
      throw refused('The manifest cannot be applied', notesOfRefusal(detailsOf(err), document));
    }
    throw err;
  }
}

/** Creates or updates the entity the manifest declares (by service_id): applying it twice writes nothing new. */
export function createManifest(db: Knex, by: Principal, documents: ReadDocument[]): Promise<AppliedManifest> {
  const document = singleDocument(documents);
  return applySingle(db, by, document, entityInputOf(document.manifest));
}

/** Replaces a manifest; its document must declare the same service_id (or none: the manifest's is kept). */
export async function updateManifest(
  db: Knex,
  by: Principal,
  ref: string,
  documents: ReadDocument[],
): Promise<AppliedManifest> {
  const stored = await getManifest(db, ref);
  if (!stored) throw notFound('Manifest');
  const document = singleDocument(documents);
  const input = entityInputOf(document.manifest);
  const declared = input.service_id ?? stored.service_id;
  if (declared !== stored.service_id) {
    const path = ['metadata', document.format === 'backstage' ? 'name' : 'service_id'];
    throw refused('A manifest keeps its service_id', [
      {
        path: pathText(['metadata', 'service_id']),
        ...locateIn(document.positions)(path),
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
