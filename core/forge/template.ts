import { ApiError } from '../errors';

// `${{ parameters.name }}` templating of action configs, where a URL may begin with a reference, and the
// variable a parameter reaches a script as (scripts take no templating). Pure: the mold checks
// (moldRules) and the forge activities share it. Both walks use a stack of their own, not
// recursion, so a config nested thousands of levels deep cannot overflow the call stack; both
// count what they produce and stop past a cap, since one reference to a large value, repeated,
// multiplies it.

const REFERENCE = String.raw`\$\{\{\s*parameters\.([A-Za-z0-9_.-]+)\s*\}\}`;
const EXPRESSION = new RegExp(REFERENCE, 'g');
const WHOLE = new RegExp(`^${REFERENCE}$`);
const LEADING = new RegExp(`^${REFERENCE}`);

/** What parameterReferences may produce (paths and names) before it stops. */
export const REFERENCES_MAX_BYTES = 1024 * 1024;

/** A template that would produce more than its cap: a 413 where a request caused it. */
export class TemplateTooLargeError extends ApiError {
  name = 'TemplateTooLargeError';
  constructor(what: string, maxBytes: number) {
    super('PAYLOAD_TOO_LARGE', `${what} exceeds its limit of ${maxBytes} bytes once its parameters are filled in`);
  }
}

/** Counts bytes against a cap; throws as soon as they pass it, before more is built. */
function byteBudget(what: string, maxBytes: number) {
  let used = 0;
  return (bytes: number) => {
    used += bytes;
    if (used > maxBytes) throw new TemplateTooLargeError(what, maxBytes);
  };
}

const setOwn = (target: object, key: string | number, value: unknown) =>
  // defineProperty, not assignment: a key such as `__proto__` stays an ordinary field.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

export interface RenderOptions {
  /** Cap on the rendered value, counted about as its JSON: text, keys, and a byte per bracket and separator. */
  maxBytes: number;
  /** What is rendered, for the error (e.g. "the api-call body"). */
  what: string;
  /**
   * Applied to each value written into text (e.g. encodeURIComponent for URL paths, so a value
   * cannot add path segments).
   */
  escape?: (text: string) => string;
}

/**
 * Replaces parameter references in every string of `value`. A string that is exactly one
 * reference becomes the parameter's value with its type (a number stays a number in a JSON
 * body); inside longer text, values are written out (lists and objects as JSON). A parameter
 * without a value (optional, no default) becomes an empty string; mold checks refuse references
 * to parameters a mold does not define. With `escape`, even a whole-string reference is text.
 * Throws TemplateTooLargeError once the result passes `maxBytes`.
 */
export function renderTemplate(value: unknown, parameters: Record<string, unknown>, options: RenderOptions): unknown {
  const { escape } = options;
  const spend = byteBudget(options.what, options.maxBytes);
  const written = new Map<string, string>();
  /** A parameter as text, escaped when there is an escape (computed once per name). */
  const textOf = (name: string) => {
    let text = written.get(name);
    if (text === undefined) {
      const v = parameters[name];
      text = v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      if (escape) text = escape(text);
      written.set(name, text);
    }
    return text;
  };
  const renderString = (text: string): unknown => {
    const whole = escape ? null : WHOLE.exec(text);
    if (whole) {
      spend(Buffer.byteLength(textOf(whole[1])));
      return parameters[whole[1]] ?? '';
    }
    spend(Buffer.byteLength(text));
    // Counted per reference, so a string of many references stops at the cap, not after it is built.
    return text.replace(EXPRESSION, (reference: string, name: string) => {
      const inserted = textOf(name);
      spend(Buffer.byteLength(inserted) - Buffer.byteLength(reference));
      return inserted;
    });
  };

  const result: { value?: unknown } = {};
  const pending: [node: unknown, into: object, key: string | number][] = [[value, result, 'value']];
  while (pending.length) {
    const [node, into, key] = pending.pop()!;
    let rendered: unknown;
    if (typeof node === 'string') {
      rendered = renderString(node);
    } else if (Array.isArray(node)) {
      spend(node.length + 1);
      rendered = new Array(node.length);
      // Reversed onto the stack, so items are rendered (and counted) in document order.
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], rendered as unknown[], i]);
    } else if (node && typeof node === 'object') {
      const entries = Object.entries(node);
      const copy = {};
      for (const [k] of entries) {
        spend(Buffer.byteLength(k) + 4);
        setOwn(copy, k, undefined); // the keys keep their order
      }
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i][1], copy, entries[i][0]]);
      rendered = copy;
    } else {
      spend(String(node).length);
      rendered = node;
    }
    setOwn(into, key, rendered);
  }
  return result.value;
}

/**
 * Every parameter reference in `value`, with where it is: a JSON path suffix such as `.body.title`.
 * Throws TemplateTooLargeError when the paths and names found pass `maxBytes` (a deep config
 * with many references would otherwise repeat its long paths for each).
 */
export function parameterReferences(value: unknown, maxBytes = REFERENCES_MAX_BYTES): { path: string; name: string }[] {
  const spend = byteBudget('the list of parameter references of this config', maxBytes);
  const found: { path: string; name: string }[] = [];
  const pending: [node: unknown, at: string][] = [[value, '']];
  while (pending.length) {
    const [node, at] = pending.pop()!;
    if (typeof node === 'string') {
      for (const match of node.matchAll(EXPRESSION)) {
        spend(at.length + match[1].length);
        found.push({ path: at, name: match[1] });
      }
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], `${at}.${i}`]);
    } else if (node && typeof node === 'object') {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i][1], `${at}.${entries[i][0]}`]);
    }
  }
  return found;
}

/** Does `text` begin with a parameter reference (e.g. a URL that is entirely a parameter)? */
export const startsWithReference = (text: string) => LEADING.test(text);

/** The environment variable a parameter reaches a script as: `release-tag` → `PARAM_RELEASE_TAG`. */
export const scriptVariable = (name: string) => `PARAM_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
