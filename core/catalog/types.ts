// The catalog's vocabulary and shapes, defined once for schemas, stores, commands and the
// database's CHECK constraints (test/integration/vocabulary.test.ts holds them together).

export const ENTITY_TYPES = [
  'service',
  'library',
  'api',
  'website',
  'tool',
  'infrastructure',
  'platform',
  'mobile-app',
  'data-pipeline',
  'ml-model',
  'documentation',
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export const LIFECYCLES = ['experimental', 'development', 'production', 'deprecated'] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];

export const TIERS = ['tier1', 'tier2', 'tier3', 'tier4'] as const;
export type Tier = (typeof TIERS)[number];

/** Who wrote the entity: the API, a manifest, a cluster agent, the source-host crawler, a person. */
export const ENTITY_SOURCES = ['kubernetes', 'manifest', 'api', 'vcs-host-a', 'manual'] as const;
export type EntitySource = (typeof ENTITY_SOURCES)[number];

export const README_FORMATS = ['markdown', 'html'] as const;
export type ReadmeFormat = (typeof README_FORMATS)[number];

export const RELATION_TYPES = ['depends_on', 'provides_api', 'consumes_api', 'part_of'] as const;
export type RelationType = (typeof RELATION_TYPES)[number];

/** How a relation reads from its target's end (GET /entities/{id}/relations, incoming). */
export const INVERSE_RELATION_NAMES = {
  depends_on: 'dependency_of',
  provides_api: 'api_provided_by',
  consumes_api: 'api_consumed_by',
  part_of: 'has_part',
} as const satisfies Record<RelationType, string>;
export type InverseRelationName = (typeof INVERSE_RELATION_NAMES)[RelationType];

export const CHANGELOG_ACTIONS = ['created', 'updated'] as const;
export type ChangelogAction = (typeof CHANGELOG_ACTIONS)[number];

/** The format an entity's manifest was written in. */
export const MANIFEST_TYPES = ['shipyard', 'backstage'] as const;
export type ManifestType = (typeof MANIFEST_TYPES)[number];

/** A service id: lowercase kebab-ish, at most 63 characters (the table's CHECK says the same). */
export const SERVICE_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';

export interface EntityLink {
  title: string;
  url: string;
  icon?: string;
}

export interface EntityReadme {
  content: string;
  format: ReadmeFormat;
}

export interface RelationInput {
  type: RelationType;
  /** A service_id or entity id of the same tenant. */
  target: string;
}

/** One entity as a writer describes it: the API body, a manifest, later agents and the crawler. */
export interface EntityInput {
  /** Derived from the name when absent. */
  service_id?: string;
  name: string;
  type: EntityType;
  lifecycle?: Lifecycle | null;
  owner?: string | null;
  description?: string | null;
  tier?: Tier | null;
  tags?: string[];
  links?: EntityLink[];
  relations?: RelationInput[];
  readme?: EntityReadme | null;
}

/** The spec's EntityUpdate: a partial change of these fields (null clears a nullable one). */
export interface EntityChange {
  name?: string;
  description?: string | null;
  owner?: string | null;
  lifecycle?: Lifecycle | null;
  tier?: Tier | null;
  tags?: string[];
}

/** The spec's Entity, as every route returns it (api/catalog/schemas.ts `entitySchema`). */
export interface EntityView {
  id: string;
  service_id: string;
  name: string;
  type: EntityType;
  lifecycle: Lifecycle | null;
  owner: string | null;
  description: string | null;
  tier: Tier | null;
  tags: string[];
  links: EntityLink[];
  source: EntitySource;
  last_activity_at: string;
  created_at: string;
  updated_at: string;
}

export const ENTITY_VIEW_FIELDS = [
  'id',
  'service_id',
  'name',
  'type',
  'lifecycle',
  'owner',
  'description',
  'tier',
  'tags',
  'links',
  'source',
  'last_activity_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof EntityView)[];
export type EntityViewField = (typeof ENTITY_VIEW_FIELDS)[number];

/** An entity with only some fields (GET /entities?fields=), never without its id. */
export type EntityProjection = Pick<EntityView, 'id'> & Partial<EntityView>;
