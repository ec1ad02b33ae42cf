import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { isUsableServiceId, serviceIdFromName } from '../catalog/entityRules';
import {
  ENTITY_DESCRIPTION_SCHEMA,
  ENTITY_LINKS_SCHEMA,
  ENTITY_NAME_SCHEMA,
  ENTITY_OWNER_SCHEMA,
  ENTITY_TAGS_SCHEMA,
  MAX_RELATIONS,
  README_MAX_LENGTH,
  RELATION_INPUT_SCHEMA,
  SERVICE_ID_SCHEMA,
} from '../catalog/fieldSchemas';
import { ENTITY_TYPES, LIFECYCLES, README_FORMATS, TIERS, type ManifestType } from '../catalog/types';
import { convertBackstage } from './backstage';
import { parseYamlStream, pathText, type ReadLimits, type YamlDocument } from './format';
import {
  MANIFEST_API_VERSION,
  MANIFEST_KIND,
  type Locate,
  type Manifest,
  type ManifestDocument,
  type ManifestPath,
  type ReadDocument,
  type SourceNote,
  type SourcePositions,
} from './types';

// Pure rules of manifests: the format's schema, validation with every problem at its line and
// column, the quality analysis, and reading a YAML stream into checked documents (ours, or
// Backstage's converted).

/**
 * Our format, as a JSON Schema (also the OpenAPI description of a converted manifest). The
 * limits are those of the entity API (api/catalog/schemas.ts): a manifest writes through the same
 * command, so it must not store what POST /entities would refuse. An empty value (`owner:`) is
 * null, which clears the field like leaving it out.
 */
export const MANIFEST_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: MANIFEST_API_VERSION },
    kind: { const: MANIFEST_KIND },
    metadata: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: ENTITY_NAME_SCHEMA,
        service_id: SERVICE_ID_SCHEMA,
        description: ENTITY_DESCRIPTION_SCHEMA,
        tags: ENTITY_TAGS_SCHEMA,
        links: ENTITY_LINKS_SCHEMA,
      },
    },
    spec: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      properties: {
        type: { enum: ENTITY_TYPES },
        lifecycle: { enum: [...LIFECYCLES, null] },
        owner: ENTITY_OWNER_SCHEMA,
        tier: { enum: [...TIERS, null] },
        relations: { type: 'array', maxItems: MAX_RELATIONS, uniqueItems: true, items: RELATION_INPUT_SCHEMA },
        // Markdown text, or {content, format}: one schema for both (the keywords of each apply
        // to its own type), so a problem is reported once rather than once per alternative.
        readme: {
          type: ['string', 'object', 'null'],
          maxLength: README_MAX_LENGTH,
          required: ['content', 'format'],
          additionalProperties: false,
          properties: {
            content: { type: 'string', maxLength: README_MAX_LENGTH },
            format: { enum: README_FORMATS },
          },
        },
      },
    },
  },
} as const;

const validateSchema = addFormats(new Ajv({ allErrors: true, strict: false })).compile(MANIFEST_SCHEMA);

const segmentsOf = (instancePath: string): ManifestPath =>
  instancePath
    .split('/')
    .filter(Boolean)
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment.replace(/~1/g, '/').replace(/~0/g, '~')));

const listed = (values: readonly unknown[]) => values.filter((value) => value !== null).join(', ');

function noteOf(error: ErrorObject, locate: Locate): SourceNote {
  const path = segmentsOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const at = (where: ManifestPath, message: string, key?: 'key') => ({
    path: pathText(where),
    ...locate(where, key),
    message,
  });
  switch (error.keyword) {
    case 'required':
      // At the map that lacks the field, under the field's own path.
      return { path: pathText([...path, params.missingProperty as string]), ...locate(path), message: 'is required' };
    case 'additionalProperties':
      return at([...path, params.additionalProperty as string], 'is not a field of this format', 'key');
    case 'enum':
      return at(path, `must be one of: ${listed(params.allowedValues as unknown[])}`);
    case 'const':
      return at(path, `must be ${JSON.stringify(params.allowedValue)}`);
    case 'type':
      // `null` is allowed where a field may be left empty; what to write there is the other type.
      return at(
        path,
        `must be ${String(params.type)
          .split(',')
          .filter((type) => type !== 'null')
          .join(' or ')}`,
      );
    default:
      return at(path, error.message ?? 'is invalid');
  }
}

/**
 * Where a string or key holds NUL, which YAML can write (`"\0"`) but PostgreSQL cannot store:
 * refused here as the writer's mistake, not failing in the database as the server's.
 */
function nulPaths(value: unknown, path: ManifestPath = []): ManifestPath[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const at = [...path, Array.isArray(value) ? Number(key) : key];
    return key.includes('\u0000') ? [at] : nulPaths(item, at);
  });
}

/** Every problem of a manifest in our format (schema, then what a schema cannot say). */
export function validateManifest(value: unknown, locate: Locate): SourceNote[] {
  const nul = nulPaths(value);
  if (nul.length) {
    return nul.map((path) => ({
      path: pathText(path),
      ...locate(path),
      message: 'must not contain the NUL character',
    }));
  }
  // ajv's uniqueItems compares every pair of relations (objects), even past maxItems: a list that
  // is too long is refused before the schema sees it.
  const relations = (value as { spec?: { relations?: unknown } } | null)?.spec?.relations;
  if (Array.isArray(relations) && relations.length > MAX_RELATIONS) {
    const path: ManifestPath = ['spec', 'relations'];
    return [{ path: pathText(path), ...locate(path), message: `must NOT have more than ${MAX_RELATIONS} items` }];
  }
  if (!validateSchema(value)) return (validateSchema.errors ?? []).map((error) => noteOf(error, locate));
  const { metadata } = value as Manifest;
  const serviceId = metadata.service_id ?? serviceIdFromName(metadata.name);
  if (isUsableServiceId(serviceId)) return [];
  const path: ManifestPath = metadata.service_id === undefined ? ['metadata', 'name'] : ['metadata', 'service_id'];
  const message =
    metadata.service_id === undefined
      ? 'no service_id can be derived from this name: add metadata.service_id'
      : 'must not look like a uuid';
  return [{ path: pathText(path), ...locate(path), message }];
}

/** Looks a converted manifest's path up in the Backstage source it came from (the nearest mapped ancestor). */
function sourceLocator(origins: Map<string, ManifestPath>, locate: Locate): Locate {
  return (path, at) => {
    for (let length = path.length; length > 0; length--) {
      const origin = origins.get(pathText(path.slice(0, length)));
      if (origin) return locate([...origin, ...path.slice(length)], length === path.length ? at : undefined);
    }
    return locate([]);
  };
}

/** The format of a document: the one asked for, else Backstage's when its apiVersion says so. */
function formatOf(value: unknown, asked: ManifestType | undefined): ManifestType {
  if (asked) return asked;
  const apiVersion = (value as { apiVersion?: unknown } | null)?.apiVersion;
  return typeof apiVersion === 'string' && apiVersion.startsWith('backstage.io/') ? 'backstage' : 'shipyard';
}

function checked(document: YamlDocument, asked: ManifestType | undefined): ManifestDocument {
  const { index, line, source, problems, warnings } = document;
  const base = { index, line, source, warnings, locate: document.locate };
  if (problems.length) return { ...base, format: asked ?? 'shipyard', outcome: 'rejected', problems };
  const format = formatOf(document.value, asked);
  if (format === 'shipyard') {
    const found = validateManifest(document.value, document.locate);
    const kind = (document.value as { kind?: unknown } | null)?.kind;
    return {
      ...base,
      format,
      kind: typeof kind === 'string' ? kind : undefined,
      outcome: found.length ? 'rejected' : 'accepted',
      draft: document.value,
      manifest: found.length ? undefined : (document.value as Manifest),
      problems: found,
    };
  }
  const conversion = convertBackstage(document.value, document.locate);
  const converted = { ...base, format, kind: conversion.kind, warnings: [...warnings, ...conversion.warnings] };
  if (!conversion.manifest) return { ...converted, outcome: conversion.outcome, problems: conversion.problems };
  const locate = sourceLocator(conversion.origins, document.locate);
  const found = [...conversion.problems, ...validateManifest(conversion.manifest, locate)];
  return {
    ...converted,
    locate,
    outcome: found.length ? 'rejected' : 'accepted',
    draft: conversion.manifest,
    manifest: found.length ? undefined : (conversion.manifest as unknown as Manifest),
    problems: found,
  };
}

/** Characters of a note's path and message: a message may quote the source (an unknown key, a value). */
const NOTE_PATH_CHARS = 200;
const NOTE_MESSAGE_CHARS = 500;

const clipped = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * `notes` in source order, at most `max` of them and each clipped, so the answer stays bounded
 * whatever the source: beyond `max`, one last note says how many more there were.
 */
function listedNotes(notes: SourceNote[], max: number, what: string): SourceNote[] {
  const sorted = inSourceOrder(notes);
  const listed = sorted.slice(0, max).map((note) => ({
    ...note,
    path: clipped(note.path, NOTE_PATH_CHARS),
    message: clipped(note.message, NOTE_MESSAGE_CHARS),
  }));
  if (sorted.length <= max) return listed;
  const { line, column } = sorted[max];
  const message = `${sorted.length - max} more ${what} not listed (SHIPYARD_MANIFEST_MAX_NOTES is ${max})`;
  return [...listed, { path: '', line, column, message }];
}

/**
 * Every non-empty document of a YAML stream, read as `format` (by default each by its apiVersion:
 * `backstage.io/...` is Backstage's, anything else ours), converted and validated. Nothing here
 * touches the database.
 */
export function readManifestDocuments(content: string, format: ManifestType | undefined, limits: ReadLimits) {
  return parseYamlStream(content, limits).map((document): ManifestDocument => {
    const read = checked(document, format);
    return {
      ...read,
      problems: listedNotes(read.problems, limits.notesPerDocument, 'problems'),
      warnings: listedNotes(read.warnings, limits.notesPerDocument, 'warnings'),
    };
  });
}

/** Where each field of an entity write is written in a manifest. */
export const ENTITY_FIELD_PATHS: Record<string, ManifestPath> = {
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

/**
 * The positions a write of `document` may report a refusal at (each entity field, each relation's
 * target), resolved while the source is at hand: what crosses a thread boundary must be plain data.
 */
function positionsOf(document: ManifestDocument): SourcePositions {
  const paths: ManifestPath[] = [[], ...Object.values(ENTITY_FIELD_PATHS)];
  document.manifest?.spec.relations?.forEach((_, i) => paths.push(['spec', 'relations', i, 'target']));
  return Object.fromEntries(paths.map((path) => [pathText(path), document.locate(path)]));
}

/**
 * A Locate over positions resolved beforehand (values: a write refuses values, never keys): a path
 * not among them is placed at its nearest resolved ancestor.
 */
export function locateIn(positions: SourcePositions): Locate {
  return (path) => {
    for (let length = path.length; length >= 0; length--) {
      const found = positions[pathText(path.slice(0, length))];
      if (found) return found;
    }
    return { line: 1, column: 1 };
  };
}

/** `document` as plain data, for the thread that writes it (POST, PUT and import). */
export function readDocumentOf(document: ManifestDocument): ReadDocument {
  const { locate: _locate, draft: _draft, ...plain } = document;
  return { ...plain, service_id: declaredServiceId(document), positions: positionsOf(document) };
}

/** Where a document stands in its stream and what it declares: how every per-document answer starts. */
export const documentSummary = (document: ReadDocument) => ({
  index: document.index,
  line: document.line,
  format: document.format,
  kind: document.kind ?? null,
  service_id: document.service_id,
});

/** The service_id of the entity a document declares, as far as it can be read; null for a skipped kind. */
function declaredServiceId(document: ManifestDocument): string | null {
  if (document.outcome === 'skipped') return null;
  const metadata = (document.draft as { metadata?: { service_id?: unknown; name?: unknown } } | undefined)?.metadata;
  if (typeof metadata?.service_id === 'string') return metadata.service_id;
  return typeof metadata?.name === 'string' ? serviceIdFromName(metadata.name) || null : null;
}

const inSourceOrder = (notes: SourceNote[]) => [...notes].sort((a, b) => a.line - b.line || a.column - b.column);
