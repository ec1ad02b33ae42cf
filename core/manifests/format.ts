import { Document, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar, visit } from 'yaml';
import type { RelationRef } from '../catalog/entityRules';
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

/** Aliases expanded per document at most: a few anchors must not become gigabytes ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;

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
  return (path, at = 'value') => {
    let node: YamlNode = doc.contents;
    let offset = startOf(node) ?? documentStart;
    for (const [i, segment] of path.entries()) {
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
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

/** Levels of nesting a stream may have; ours and Backstage's need under ten. */
export const MAX_NESTING = 64;

/**
 * The first line where `text` may nest deeper than MAX_NESTING, or undefined. The YAML library
 * composes nodes recursively: thousands of levels (`- - - … x`, `[[[…`) cost seconds and can
 * abort the process, so such text is refused before it is parsed. This one linear pass
 * over-estimates (it counts indentation levels, indicators such as `- ` and `: `, and open
 * brackets, even inside strings), which only ever refuses text no manifest is written like.
 */
export function tooDeepAt(text: string): number | undefined {
  const indents: number[] = [];
  let brackets = 0;
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (/^(---|\.\.\.)(\s|$)/.test(line)) {
      indents.length = 0;
      brackets = 0;
    }
    const content = line.trimStart();
    if (!content || content.startsWith('#')) continue;
    const indent = line.length - content.length;
    if (brackets === 0) {
      while (indents.length && indents[indents.length - 1] >= indent) indents.pop();
      indents.push(indent);
    }
    let deepest = brackets;
    for (const char of content) {
      if (char === '[' || char === '{') deepest = Math.max(deepest, ++brackets);
      else if ((char === ']' || char === '}') && brackets > 0) brackets -= 1;
    }
    const indicators = content.match(/(^|\s)[-?:](?=\s|$)/g)?.length ?? 0;
    if (indents.length + indicators + deepest > MAX_NESTING) return i + 1;
  }
  return undefined;
}

/**
 * Every non-empty document of `text`, each read on its own: one document's syntax error leaves the
 * others readable. Text that may nest too deep to parse safely is a 400 as a whole.
 */
export function parseYamlStream(text: string): YamlDocument[] {
  const deep = tooDeepAt(text);
  if (deep !== undefined) {
    throw invalid(`content nests deeper than ${MAX_NESTING} levels`, [
      { field: 'body.content', message: `line ${deep}: more than ${MAX_NESTING} levels of nesting` },
    ]);
  }
  const lines = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
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
