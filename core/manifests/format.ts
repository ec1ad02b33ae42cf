import {
  Document,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  Scalar,
  visit,
  type YAMLMap,
} from 'yaml';
import type { RelationRef } from '../catalog/entityRules';
import type { InputLimits } from '../limitsConfig';
import type { EntityInput, EntityReadme, EntityView } from '../catalog/types';
import { invalid } from '../errors';
import {
  MANIFEST_API_VERSION,
  MANIFEST_KIND,
  type Locate,
  type Manifest,
  type ManifestPath,
  type SourceNote,
  type SourcePosition,
} from './types';
import { documentsIn, largestDocumentNodes, MAX_NESTING, tooDeepAt } from './streamScan';
import { measureDocument } from './yamlBudget';

// Our manifest format as text: a YAML stream read into documents whose every node knows its
// line and column (the `yaml` package's LineCounter), a manifest rendered back to YAML, and the
// mapping between a manifest and an entity.

/** A document of a YAML stream, before anything reads it as a manifest. */
export interface YamlDocument {
  /** 0-based, among the stream's non-empty documents. */
  index: number;
  line: number;
  source: string;
  /** The document as plain data; undefined when it has syntax problems. */
  value: unknown;
  /** Syntax problems: the document cannot be read at all. */
  problems: SourceNote[];
  /** What YAML itself warns about (an unknown tag); the document is still read. */
  warnings: SourceNote[];
  locate: Locate;
}

/** Aliases expanded per document at most, the `yaml` package's own guard (yamlBudget.ts measures what they expand to). */
const MAX_ALIAS_COUNT = 100;

/** What reading a stream is held to (core/config.ts, docs/limits.md). */
export type ReadLimits = Pick<InputLimits, 'documents' | 'nodes' | 'keysPerMap' | 'notesPerDocument'>;

/** `spec.relations[0].target` from its segments. */
export const pathText = (path: ManifestPath): string =>
  path.reduce<string>(
    (text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : text ? `${text}.${segment}` : segment),
    '',
  );

type YamlNode = ReturnType<Document['createNode']> | null | undefined;

const startOf = (node: YamlNode): number | undefined => (node && 'range' in node ? node.range?.[0] : undefined);

/**
 * Finds where `path` is written in `doc`: the value at the path, or the key when `at` is 'key'
 * (an unknown field is reported at its name). A path that leaves the document stops at the
 * nearest enclosing node.
 */
function locator(doc: Document, lines: LineCounter, documentStart: number): Locate {
  const position = (offset: number): SourcePosition => {
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  // Each map's pairs by key, built when a path first goes through it: a scan per lookup would make
  // problems × keys quadratic.
  const indexes = new WeakMap<YAMLMap, Map<string, YAMLMap['items'][number]>>();
  const pairIn = (map: YAMLMap, key: string) => {
    let index = indexes.get(map);
    if (!index) {
      index = new Map();
      for (const item of map.items) {
        if (isScalar(item.key) && !index.has(String(item.key.value))) index.set(String(item.key.value), item);
      }
      indexes.set(map, index);
    }
    return index.get(key);
  };
  return (path, at = 'value') => {
    let node: YamlNode = doc.contents;
    let offset = startOf(node) ?? documentStart;
    for (const [i, segment] of path.entries()) {
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = pairIn(node, String(segment));
        if (!pair) break;
        const keyStart = startOf(pair.key as YamlNode);
        const valueStart = startOf(pair.value as YamlNode);
        // `owner:` with nothing after it has an empty value node: the key is where it is written.
        const valueWritten = isScalar(pair.value) ? pair.value.source !== '' : valueStart !== undefined;
        offset = (last && at === 'key') || !valueWritten ? (keyStart ?? offset) : (valueStart ?? offset);
        node = pair.value as YamlNode;
      } else if (isSeq(node) && typeof segment === 'number' && segment < node.items.length) {
        node = node.items[segment] as YamlNode;
        offset = startOf(node) ?? offset;
      } else {
        break;
      }
    }
    return position(offset);
  };
}

/** Map keys other than plain scalars (`? [a, b]`) have no field name; they are refused, never stringified. */
function collectionKeys(doc: Document): number[] {
  const offsets: number[] = [];
  visit(doc, {
    Pair(_, pair) {
      if (isPair(pair) && pair.key !== null && !isScalar(pair.key)) {
        offsets.push(startOf(pair.key as YamlNode) ?? 0);
      }
    },
  });
  return offsets;
}

/** A document over a budget refuses the whole request: its answer would cost what the budget prevents. */
function overBudgetError(index: number, notes: SourceNote[]) {
  const [first] = notes;
  return invalid(
    `content document ${index} is over a parsing budget: ${first.message}`,
    notes.slice(0, 5).map((note) => ({
      field: 'body.content',
      message: `line ${note.line}, column ${note.column}: ${note.message}`,
    })),
  );
}

/**
 * Every non-empty document of `text`, each read on its own: one document's syntax error leaves the
 * others readable. Text that may nest too deep to parse safely or holds too many documents, or a
 * document over the node or key budget (measured before anything expands it), is a 400 as a whole.
 */
export function parseYamlStream(text: string, limits: ReadLimits): YamlDocument[] {
  const deep = tooDeepAt(text);
  if (deep !== undefined) {
    throw invalid(`content nests deeper than ${MAX_NESTING} levels`, [
      { field: 'body.content', message: `line ${deep}: more than ${MAX_NESTING} levels of nesting` },
    ]);
  }
  const count = documentsIn(text);
  if (count > limits.documents) {
    throw invalid(`content holds ${count} documents, more than ${limits.documents} (SHIPYARD_MANIFEST_MAX_DOCUMENTS)`, [
      { field: 'body.content', message: `must hold at most ${limits.documents} documents` },
    ]);
  }
  const nodes = largestDocumentNodes(text);
  if (nodes > limits.nodes) {
    throw invalid(
      `a document of content writes about ${nodes} nodes, more than ${limits.nodes} (SHIPYARD_MANIFEST_MAX_NODES)`,
      [{ field: 'body.content', message: `each document must hold at most ${limits.nodes} nodes` }],
    );
  }
  const lines = new LineCounter();
  // Duplicate keys are found by measureDocument: the package's `uniqueKeys` compares every key with every other.
  const documents = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  const read: YamlDocument[] = [];
  for (const doc of documents) {
    if ((doc.contents === null || (isScalar(doc.contents) && doc.contents.source === '')) && !doc.errors.length) {
      continue;
    }
    const [start, , end] = doc.range;
    const contentStart = startOf(doc.contents) ?? start;
    const locate = locator(doc, lines, contentStart);
    const noteAt = (offset: number, message: string): SourceNote => {
      const { line, col } = lines.linePos(offset);
      return { path: '', line, column: col, message };
    };
    const problems = doc.errors.map((error) => noteAt(error.pos[0], error.message));
    problems.push(...collectionKeys(doc).map((offset) => noteAt(offset, 'a key must be a plain string')));
    if (!problems.length) {
      const { overBudget, duplicateKeys } = measureDocument(doc, limits);
      if (overBudget.length)
        throw overBudgetError(
          read.length,
          overBudget.map(({ offset, message }) => noteAt(offset, message)),
        );
      problems.push(...duplicateKeys.map(({ offset, message }) => noteAt(offset, message)));
    }
    let value: unknown;
    if (!problems.length) {
      try {
        value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      } catch (err) {
        // An alias to no anchor, or more aliases than allowed.
        problems.push(noteAt(contentStart, (err as Error).message));
      }
    }
    read.push({
      index: read.length,
      line: lines.linePos(contentStart).line,
      // As written: trailing spaces of a block scalar's last line belong to its value.
      source: text.slice(start, end).replace(/([^\n])$/, '$1\n'),
      value,
      problems,
      warnings: doc.warnings.map((warning) => noteAt(warning.pos[0], warning.message)),
      locate,
    });
  }
  return read;
}

/**
 * Characters YAML output must escape that the `yaml` package writes raw (it escapes what
 * JSON.stringify does, C0 controls and lone surrogates): DEL and the C1 controls, which are not
 * printable; NEL, LS and PS, which a YAML 1.1 reader (PyYAML) takes for line breaks; the BOM,
 * which may not appear inside a document; U+FFFE and U+FFFF, which are not characters. A
 * strict reader refuses the whole document over one of them.
 */
const WRITTEN_RAW = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
const NAMED_ESCAPES: Record<string, string> = { '\x85': '\\N', '\u2028': '\\L', '\u2029': '\\P' };

const escapeInDoubleQuotes = (char: string): string => {
  const code = char.charCodeAt(0);
  return NAMED_ESCAPES[char] ?? (code <= 0xff ? `\\x${code.toString(16)}` : `\\u${code.toString(16)}`);
};

/** YAML text of one or many documents (a stream separated by `---`). */
export const renderYaml = (documents: unknown[]): string =>
  documents
    .map((value) => {
      const document = new Document(value);
      // Only double-quoted scalars have escapes: a string carrying such a character is written
      // double-quoted, so each one left raw in the text is inside quotes and can be escaped there.
      visit(document, {
        Scalar(_, node) {
          if (typeof node.value === 'string' && WRITTEN_RAW.test(node.value)) node.type = Scalar.QUOTE_DOUBLE;
        },
      });
      return document.toString({ lineWidth: 0 }).replace(new RegExp(WRITTEN_RAW, 'g'), escapeInDoubleQuotes);
    })
    .join('---\n');

/**
 * The entity a manifest declares. A manifest states the whole entity: a field it leaves out is
 * cleared (relations included), so applying it twice writes nothing the second time.
 */
export function entityInputOf(manifest: Manifest): EntityInput {
  const { metadata, spec } = manifest;
  const readme: EntityReadme | null =
    typeof spec.readme === 'string' ? { content: spec.readme, format: 'markdown' } : (spec.readme ?? null);
  return {
    service_id: metadata.service_id,
    name: metadata.name,
    type: spec.type,
    lifecycle: spec.lifecycle ?? null,
    owner: spec.owner ?? null,
    description: metadata.description ?? null,
    tier: spec.tier ?? null,
    tags: metadata.tags ?? [],
    links: metadata.links ?? [],
    relations: spec.relations ?? [],
    readme,
  };
}

/** An entity as a manifest of our format: what `GET /entities/{id}/manifest` renders; empty fields are left out. */
export function manifestOfEntity(entity: EntityView, readme: EntityReadme | null, relations: RelationRef[]): Manifest {
  const sorted = [...relations].sort((a, b) => a.type.localeCompare(b.type) || a.target.localeCompare(b.target));
  return {
    apiVersion: MANIFEST_API_VERSION,
    kind: MANIFEST_KIND,
    metadata: {
      name: entity.name,
      service_id: entity.service_id,
      ...(entity.description !== null && { description: entity.description }),
      ...(entity.tags.length && { tags: entity.tags }),
      ...(entity.links.length && { links: entity.links }),
    },
    spec: {
      type: entity.type,
      ...(entity.lifecycle !== null && { lifecycle: entity.lifecycle }),
      ...(entity.owner !== null && { owner: entity.owner }),
      ...(entity.tier !== null && { tier: entity.tier }),
      ...(sorted.length && { relations: sorted }),
      ...(readme && { readme }),
    },
  };
}
