// `${{ parameters.name }}` templating of action configs, where a URL may begin with a reference, and the
// variable a parameter reaches a script as (scripts take no templating). Pure: the mold checks
// (moldRules) and the forge activities share it.

const REFERENCE = String.raw`\$\{\{\s*parameters\.([A-Za-z0-9_.-]+)\s*\}\}`;
const EXPRESSION = new RegExp(REFERENCE, 'g');
const WHOLE = new RegExp(`^${REFERENCE}$`);
const LEADING = new RegExp(`^${REFERENCE}`);

/**
 * Replaces parameter references in every string of `value`. A string that is exactly one
 * reference becomes the parameter's value with its type (a number stays a number in a JSON
 * body); inside longer text, values are written out (lists and objects as JSON). A parameter
 * without a value (optional, no default) becomes an empty string; mold checks refuse references
 * to parameters a mold does not define. `escape`, when given, is applied to each value written
 * into text (e.g. encodeURIComponent for URL paths, so a value cannot add path segments).
 */
export function renderTemplate(
  value: unknown,
  parameters: Record<string, unknown>,
  escape?: (text: string) => string,
): unknown {
  if (typeof value === 'string') {
    const whole = escape ? null : WHOLE.exec(value);
    if (whole) return parameters[whole[1]] ?? '';
    return value.replace(EXPRESSION, (_, name: string) => {
      const v = parameters[name];
      if (v === undefined || v === null) return '';
      const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
      return escape ? escape(text) : text;
    });
  }
  if (Array.isArray(value)) return value.map((item) => renderTemplate(item, parameters, escape));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, parameters, escape)]));
  }
  return value;
}

/** Every parameter reference in `value`, with where it is: a JSON path suffix such as `.body.title`. */
export function parameterReferences(value: unknown, at = ''): { path: string; name: string }[] {
  if (typeof value === 'string') return [...value.matchAll(EXPRESSION)].map((match) => ({ path: at, name: match[1] }));
  if (Array.isArray(value)) return value.flatMap((item, i) => parameterReferences(item, `${at}.${i}`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => parameterReferences(v, `${at}.${k}`));
  return [];
}

/** Does `text` begin with a parameter reference (e.g. a URL that is entirely a parameter)? */
export const startsWithReference = (text: string) => LEADING.test(text);

/** The environment variable a parameter reaches a script as: `release-tag` → `PARAM_RELEASE_TAG`. */
export const scriptVariable = (name: string) => `PARAM_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
