// What a YAML stream costs, read off its text in one linear pass each, before the parser sees
// it: the `yaml` package composes nodes recursively and at about a microsecond per byte, so depth,
// document count and size are judged first. Each pass errs towards counting more than there is,
// which only ever refuses text no manifest is written like.

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
 * How many documents `text` may hold: the stretches between `---` and `...` lines that hold
 * anything but comments. Counted without parsing, so a stream of thousands of documents is
 * refused before it costs anything; it can only over-count (a marker inside a quoted string).
 */
export function documentsIn(text: string): number {
  let documents = 0;
  let holdsContent = false;
  for (const line of text.split('\n')) {
    const marker = /^(---|\.\.\.)(\s|$)/.exec(line);
    const content = (marker ? line.slice(3) : line).trim();
    if (marker) holdsContent = false;
    if (content && !content.startsWith('#') && !holdsContent) {
      holdsContent = true;
      documents += 1;
    }
  }
  return documents;
}

/** A line that starts a block scalar (`key: |`, `- >-`): the lines indented deeper are its text. */
const BLOCK_SCALAR = /(^|[:-]\s+)[|>][-+1-9]*\s*(#.*)?$/;
/** A block map entry (`key:`, `"key":`) once any `- ` indicators are taken off. */
const BLOCK_KEY = /^([^\s#'"[{?:-][^#]*?|"[^"]*"|'[^']*'):(\s|$)/;

/**
 * About how many nodes the largest document of `text` writes, aliases not expanded: two per block
 * map entry (key and value), one per `- ` item, two per flow collection and one more per comma in
 * it (outside quotes); lines of block scalars count nothing. It can under-count (flow map keys),
 * hardly over-count, so a document over the node budget by this measure is refused before a
 * second is spent parsing it.
 */
export function largestDocumentNodes(text: string): number {
  let largest = 0;
  let nodes = 0;
  let brackets = 0;
  let blockScalarIndent = -1;
  for (const line of text.split('\n')) {
    if (/^(---|\.\.\.)(\s|$)/.test(line)) {
      largest = Math.max(largest, nodes);
      nodes = 0;
      brackets = 0;
      blockScalarIndent = -1;
      continue;
    }
    let content = line.trimStart();
    const indent = line.length - content.length;
    if (blockScalarIndent >= 0) {
      if (!content || indent > blockScalarIndent) continue;
      blockScalarIndent = -1;
    }
    if (!content || content.startsWith('#')) continue;
    if (brackets === 0) {
      while (/^-(\s|$)/.test(content)) {
        nodes += 1;
        content = content.slice(1).trimStart();
      }
      if (BLOCK_KEY.test(content)) nodes += 2;
      if (BLOCK_SCALAR.test(content)) {
        blockScalarIndent = indent;
        continue;
      }
      // Brackets count only where a flow collection begins: `[` in prose is text.
      const value = content.replace(BLOCK_KEY, '').trimStart();
      if (!value.startsWith('[') && !value.startsWith('{')) continue;
      content = value;
    }
    let quote = '';
    let escaped = false;
    for (const char of content) {
      if (quote) {
        if (escaped) escaped = false;
        else if (char === '\\' && quote === '"') escaped = true;
        else if (char === quote) quote = '';
      } else if (char === '"' || char === "'") quote = char;
      else if (char === '[' || char === '{') {
        brackets += 1;
        nodes += 2;
      } else if (char === ']' || char === '}') brackets = Math.max(0, brackets - 1);
      else if (char === ',' && brackets > 0) nodes += 1;
      else if (char === '#' && brackets === 0) break;
    }
  }
  return Math.max(largest, nodes);
}
