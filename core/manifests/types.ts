import type {
  EntityLink,
  EntityReadme,
  EntityType,
  Lifecycle,
  ManifestType,
  RelationInput,
  Tier,
} from '../catalog/types';

// The vocabulary of manifests: our format's header, what a YAML document became, and the
// problems and warnings reported about it with their place in the source.

export const MANIFEST_API_VERSION = 'shipyard.dev/v1';
export const MANIFEST_KIND = 'Entity';

/** The Backstage kinds the conversion knows; any other kind is skipped with a warning. */
export const BACKSTAGE_KINDS = ['Component', 'API', 'System', 'Resource', 'Group'] as const;
export type BackstageKind = (typeof BACKSTAGE_KINDS)[number];

/** What became of one document: a manifest to apply, nothing to apply (a Group), or refused. */
export const DOCUMENT_OUTCOMES = ['accepted', 'skipped', 'rejected'] as const;
export type DocumentOutcome = (typeof DOCUMENT_OUTCOMES)[number];

/** What an import or a create did with a document. */
export const APPLY_RESULTS = ['created', 'updated', 'skipped', 'rejected'] as const;
export type ApplyResult = (typeof APPLY_RESULTS)[number];

/** A place in a YAML source: 1-based line and column. */
export interface SourcePosition {
  line: number;
  column: number;
}

/** A problem (the document is refused) or a warning (it is applied), where it was found. */
export interface SourceNote extends SourcePosition {
  /** The field, dotted with [i] for list items (`spec.relations[0].target`); '' for the whole document. */
  path: string;
  message: string;
}

/** A manifest path as segments: map keys and list indexes. */
export type ManifestPath = (string | number)[];

/**
 * Where the value at `path` is written (or its key, with `at: 'key'`), or the nearest enclosing
 * node that exists.
 */
export type Locate = (path: ManifestPath, at?: 'key' | 'value') => SourcePosition;

/** A manifest of our format, as written (after validation). */
export interface Manifest {
  apiVersion: typeof MANIFEST_API_VERSION;
  kind: typeof MANIFEST_KIND;
  metadata: {
    name: string;
    service_id?: string;
    description?: string | null;
    tags?: string[];
    links?: EntityLink[];
  };
  spec: {
    type: EntityType;
    lifecycle?: Lifecycle | null;
    owner?: string | null;
    tier?: Tier | null;
    relations?: RelationInput[];
    /** Markdown text, or the content with its format. */
    readme?: string | EntityReadme | null;
  };
}

/** One document of a YAML stream, read, converted when it was Backstage's, and validated. */
export interface ManifestDocument {
  /** 0-based, among the stream's non-empty documents. */
  index: number;
  /** Where the document's content starts. */
  line: number;
  /** The document's own source text: what a manifest row keeps. */
  source: string;
  format: ManifestType;
  /** The Backstage kind, or `Entity` for ours (undefined when unreadable). */
  kind?: string;
  outcome: DocumentOutcome;
  /** The document in our format, valid or not (what the analysis reads); undefined when unreadable. */
  draft?: unknown;
  /** The manifest in our format (accepted documents only). */
  manifest?: Manifest;
  problems: SourceNote[];
  warnings: SourceNote[];
  locate: Locate;
}

/** Positions of values resolved where the source was parsed, by `pathText`: plain data, unlike a Locate. */
export type SourcePositions = Record<string, SourcePosition>;

/** A document as the parser thread hands it over: plain data, with the positions its writes may need. */
export interface ReadDocument extends Omit<ManifestDocument, 'locate' | 'draft'> {
  /** The entity it declares, as far as it can be read (null for a skipped kind). */
  service_id: string | null;
  positions: SourcePositions;
}
