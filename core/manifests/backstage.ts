import { ENTITY_TYPES, LIFECYCLES, type EntityType, type RelationType } from '../catalog/types';
import { pathText } from './format';
import {
  BACKSTAGE_KINDS,
  MANIFEST_API_VERSION,
  MANIFEST_KIND,
  type BackstageKind,
  type DocumentOutcome,
  type Locate,
  type ManifestPath,
  type SourceNote,
} from './types';

// A Backstage-style descriptor (one document) as a manifest of our format. Every field either
// maps (README "Backstage mapping") or is reported as a warning at its place in the source:
// nothing is dropped silently. The result is not validated here; the caller validates it like
// any manifest, finding each field's source through `origins`.

export interface BackstageConversion {
  kind?: string;
  outcome: DocumentOutcome;
  /** Our format, not yet validated: all that maps, also when the document has problems (absent when nothing does). */
  manifest?: Record<string, unknown>;
  /** For a path of the manifest (`pathText`), the path in the Backstage document it came from. */
  origins: Map<string, ManifestPath>;
  problems: SourceNote[];
  warnings: SourceNote[];
}

type Mapped = Exclude<BackstageKind, 'Group'>;

/** The spec fields each kind maps; any other is a warning. */
const SPEC_FIELDS: Record<Mapped, readonly string[]> = {
  Component: ['type', 'lifecycle', 'owner', 'system', 'dependsOn', 'providesApis', 'consumesApis'],
  API: ['type', 'lifecycle', 'owner', 'system'],
  System: ['type', 'owner'],
  Resource: ['type', 'owner', 'system', 'dependsOn'],
};

/** The entity type of each kind; a Component's comes from its spec.type. */
const KIND_TYPES: Record<Exclude<Mapped, 'Component'>, EntityType> = {
  API: 'api',
  System: 'platform',
  Resource: 'infrastructure',
};

const LIST_RELATIONS: Record<string, RelationType> = {
  dependsOn: 'depends_on',
  providesApis: 'provides_api',
  consumesApis: 'consumes_api',
};

const METADATA_FIELDS = ['name', 'namespace', 'title', 'description', 'tags', 'links'];

/** Why a field has no equivalent, where there is more to say than that. */
const UNMAPPED: Record<string, string> = {
  subcomponentOf: 'sub-components have no equivalent (an entity is part_of a system)',
  dependencyOf: 'relations are declared by the entity that depends: write dependsOn there',
  definition: 'API definitions are not stored in the catalog',
  domain: 'domains have no equivalent',
  annotations: 'annotations have no equivalent',
  labels: 'labels have no equivalent',
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A Backstage name (letters, digits, `-_.`) as a service id: lowercase, other characters as `-`. */
export const serviceIdOfName = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');

interface EntityRef {
  kind?: string;
  namespace?: string;
  name: string;
}

/** `[kind:][namespace/]name`, as Backstage writes references (`component:default/foo`, `api:foo`, `foo`). */
export function parseEntityRef(ref: string): EntityRef | undefined {
  const match = /^(?:([^:/\s]+):)?(?:([^:/\s]+)\/)?([^:/\s]+)$/.exec(ref);
  if (!match) return undefined;
  const [, kind, namespace, name] = match;
  return { kind: kind?.toLowerCase(), namespace, name };
}

/** What a conversion collects as it goes: problems, warnings, and where each field of ours came from. */
class Notes {
  readonly problems: SourceNote[] = [];
  readonly warnings: SourceNote[] = [];
  readonly origins = new Map<string, ManifestPath>();
  constructor(private readonly locate: Locate) {}

  problem(path: ManifestPath, message: string) {
    this.problems.push({ path: pathText(path), ...this.locate(path), message });
  }
  warn(path: ManifestPath, message: string, at?: 'key') {
    this.warnings.push({ path: pathText(path), ...this.locate(path, at), message });
  }
  /** A field with no equivalent: a warning at its key. */
  unmapped(path: ManifestPath) {
    const field = path[path.length - 1] as string;
    this.warn(path, `${UNMAPPED[field] ?? 'has no equivalent'}; not kept`, 'key');
  }
  /** Field `ours` (a `pathText`) of the manifest comes from `theirs` in the descriptor. */
  from(ours: string, theirs: ManifestPath) {
    this.origins.set(ours, theirs);
  }
}

type Fields = Record<string, unknown>;

function mapMetadata(metadata: Fields & { name: string }, notes: Notes): Fields {
  for (const field of Object.keys(metadata)) {
    if (!METADATA_FIELDS.includes(field)) notes.unmapped(['metadata', field]);
  }
  const serviceId = serviceIdOfName(metadata.name);
  if (serviceId !== metadata.name) notes.warn(['metadata', 'name'], `becomes service_id "${serviceId}"`);
  if (metadata.namespace !== undefined && metadata.namespace !== 'default') {
    notes.warn(['metadata', 'namespace'], 'namespaces have no equivalent: entities are named by service_id alone');
  }
  const ours: Fields = { name: metadata.title ?? metadata.name, service_id: serviceId };
  notes.from('metadata.name', ['metadata', metadata.title === undefined ? 'name' : 'title']);
  notes.from('metadata.service_id', ['metadata', 'name']);
  for (const field of ['description', 'tags'] as const) {
    if (metadata[field] === undefined) continue;
    ours[field] = metadata[field];
    notes.from(`metadata.${field}`, ['metadata', field]);
  }
  if (metadata.links !== undefined) {
    notes.from('metadata.links', ['metadata', 'links']);
    ours.links = Array.isArray(metadata.links)
      ? metadata.links.map((link: unknown, i) => {
          if (!isObject(link)) return link;
          for (const field of Object.keys(link)) {
            if (!['url', 'title', 'icon'].includes(field)) notes.unmapped(['metadata', 'links', i, field]);
          }
          return { title: link.title ?? link.url, url: link.url, ...(link.icon !== undefined && { icon: link.icon }) };
        })
      : metadata.links;
  }
  return ours;
}

/** type, lifecycle and owner; `ours` is the metadata, where a non-Component's spec.type becomes a tag. */
function mapSpec(kind: Mapped, spec: Fields, ours: Fields, notes: Notes): Fields {
  const fields = SPEC_FIELDS[kind];
  for (const field of Object.keys(spec)) {
    if (!fields.includes(field)) notes.unmapped(['spec', field]);
  }
  const theirs: Fields = {};
  if (kind === 'Component') {
    const known = (ENTITY_TYPES as readonly unknown[]).includes(spec.type);
    theirs.type = known ? spec.type : 'service';
    notes.from('spec.type', spec.type === undefined ? ['kind'] : ['spec', 'type']);
    if (spec.type === undefined) notes.warn(['kind'], 'a Component without spec.type is read as a "service"');
    else if (!known) notes.warn(['spec', 'type'], `type "${String(spec.type)}" is read as "service"`);
  } else {
    theirs.type = KIND_TYPES[kind];
    notes.from('spec.type', ['kind']);
    // An API's format (openapi, grpc), a resource's kind (database): kept as one more tag.
    const tags = ours.tags ?? [];
    if (spec.type !== undefined && !Array.isArray(tags)) notes.unmapped(['spec', 'type']);
    else if (spec.type !== undefined && Array.isArray(tags) && !tags.includes(spec.type)) {
      notes.from(`metadata.tags[${tags.length}]`, ['spec', 'type']);
      ours.tags = [...tags, spec.type];
    }
  }
  if (spec.lifecycle !== undefined && fields.includes('lifecycle')) {
    if ((LIFECYCLES as readonly unknown[]).includes(spec.lifecycle)) {
      theirs.lifecycle = spec.lifecycle;
      notes.from('spec.lifecycle', ['spec', 'lifecycle']);
    } else {
      const message = `"${String(spec.lifecycle)}" is not one of ${LIFECYCLES.join(', ')}; not kept`;
      notes.warn(['spec', 'lifecycle'], message);
    }
  }
  if (spec.owner !== undefined) {
    const owner = typeof spec.owner === 'string' ? parseEntityRef(spec.owner) : undefined;
    if (!owner) {
      notes.problem(['spec', 'owner'], 'must be an entity reference such as group:default/team-a');
    } else {
      theirs.owner = owner.name;
      notes.from('spec.owner', ['spec', 'owner']);
      if (owner.kind === 'user') {
        const message = `a user reference: owner is kept as "${owner.name}" (ours names a team or an email)`;
        notes.warn(['spec', 'owner'], message);
      }
    }
  }
  return theirs;
}

/** dependsOn, providesApis, consumesApis, then system, in that order; a reference named twice counts once. */
function mapRelations(kind: Mapped, spec: Fields, notes: Notes): { type: RelationType; target: string }[] {
  const fields = SPEC_FIELDS[kind];
  const relations: { type: RelationType; target: string }[] = [];
  const seen = new Set<string>();
  const add = (type: RelationType, ref: unknown, path: ManifestPath) => {
    const parsed = typeof ref === 'string' ? parseEntityRef(ref) : undefined;
    if (!parsed) {
      notes.problem(path, 'must be an entity reference such as component:default/name');
      return;
    }
    if (parsed.namespace !== undefined && parsed.namespace !== 'default') {
      notes.warn(path, `namespace "${parsed.namespace}" has no equivalent: the reference names "${parsed.name}"`);
    }
    const target = serviceIdOfName(parsed.name);
    if (seen.has(`${type} ${target}`)) return;
    seen.add(`${type} ${target}`);
    notes.from(`spec.relations[${relations.length}]`, path);
    relations.push({ type, target });
  };
  for (const [field, type] of Object.entries(LIST_RELATIONS)) {
    const refs = spec[field];
    if (refs === undefined || !fields.includes(field)) continue;
    if (Array.isArray(refs)) refs.forEach((ref, i) => add(type, ref, ['spec', field, i]));
    else notes.problem(['spec', field], 'must be a list of entity references');
  }
  if (spec.system !== undefined && fields.includes('system')) add('part_of', spec.system, ['spec', 'system']);
  return relations;
}

export function convertBackstage(value: unknown, locate: Locate): BackstageConversion {
  const notes = new Notes(locate);
  const { problems, warnings, origins } = notes;
  const ended = (outcome: DocumentOutcome, kind?: string): BackstageConversion => ({
    kind,
    outcome,
    origins,
    problems,
    warnings,
  });

  if (!isObject(value)) {
    notes.problem([], 'a Backstage descriptor is a map of apiVersion, kind, metadata and spec');
    return ended('rejected');
  }
  const { kind, metadata, spec = {} } = value;
  if (typeof kind !== 'string' || kind === '') {
    notes.problem(['kind'], `is required: one of ${BACKSTAGE_KINDS.join(', ')}`);
    return ended('rejected');
  }
  if (!(BACKSTAGE_KINDS as readonly string[]).includes(kind)) {
    notes.warn(['kind'], `kind "${kind}" has no equivalent in the catalog; the document is not imported`);
    return ended('skipped', kind);
  }
  if (kind === 'Group') {
    notes.warn(['kind'], 'teams are managed under /teams and by the identity provider; the Group is not imported');
    return ended('skipped', kind);
  }
  for (const field of Object.keys(value)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(field)) notes.unmapped([field]);
  }
  if (!isObject(metadata) || typeof metadata.name !== 'string' || metadata.name === '') {
    if (isObject(metadata)) notes.problem(['metadata', 'name'], 'is required');
    else notes.problem(['metadata'], 'is required, with a name');
    return ended('rejected', kind);
  }
  if (!isObject(spec)) {
    notes.problem(['spec'], 'must be a map');
    return ended('rejected', kind);
  }
  const ours = mapMetadata(metadata as Fields & { name: string }, notes);
  const theirs = mapSpec(kind as Mapped, spec, ours, notes);
  const relations = mapRelations(kind as Mapped, spec, notes);
  if (relations.length) theirs.relations = relations;
  // With problems, what maps is still returned, so the caller reports every problem at once.
  const manifest = { apiVersion: MANIFEST_API_VERSION, kind: MANIFEST_KIND, metadata: ours, spec: theirs };
  return { ...ended(problems.length ? 'rejected' : 'accepted', kind), manifest };
}
