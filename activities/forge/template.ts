// `${{ parameters.name }}` templating of action configs. Pure.

const EXPRESSION = /\$\{\{\s*parameters\.([A-Za-z0-9_.-]+)\s*\}\}/g;
const WHOLE = /^\$\{\{\s*parameters\.([A-Za-z0-9_.-]+)\s*\}\}$/;

/**
 * Replaces parameter references in every string of `value`. A string that is exactly one
 * reference becomes the parameter's value with its type (a number stays a number in a JSON
 * body); inside longer text, values are written out (lists and objects as JSON). An unknown
 * parameter becomes an empty string. `escape`, when given, is applied to each value written into
 * text (e.g. encodeURIComponent for URL paths, so a value cannot add path segments).
 */
export function renderTemplate(value: unknown, parameters: Record<string, unknown>, escape?: (text: string) => string): unknown {
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
