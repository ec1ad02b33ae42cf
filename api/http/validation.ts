import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { invalid, type ErrorDetail } from '../../core/errors';
import type { Schema } from './route';

// Both fill in the schemas' declared defaults, so a `default` is the one place a default value
// lives: handlers, stores and activities receive it already applied. Bodies are JSON and must
// match exactly; path and query values arrive as strings, so that validator coerces them.
// (An update body's fields therefore declare no defaults: a default there would overwrite what
// is stored. A unit test holds every PUT and PATCH route to that.)
const bodyAjv = withStorableFormats(addFormats(new Ajv({ allErrors: true, strict: false, useDefaults: true })));
const stringInputAjv = withStorableFormats(
  addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true })),
);

/**
 * Formats as PostgreSQL can store them, so a valid-looking value never fails in the database as
 * a 500 instead of the caller's 400 (found by schemathesis):
 * - `date-time` as RFC 3339 has it, without year 0000 and with a UTC offset under 16 hours (RFC
 *   3339 allows up to 23:59); `date` without year 0000;
 * - `uuid` without the `urn:uuid:` prefix that ajv-formats also takes and PostgreSQL refuses.
 */
function withStorableFormats(ajv: Ajv): Ajv {
  const rfc3339 = fullFormats['date-time'] as { validate: (value: string) => boolean };
  const fullDate = fullFormats.date as { validate: (value: string) => boolean };
  return ajv
    .addFormat('date-time', {
      type: 'string',
      validate: (value: string) => {
        if (!rfc3339.validate(value) || value.startsWith('0000')) return false;
        const offsetHours = /[+-](\d\d):?\d\d$/.exec(value)?.[1];
        return offsetHours === undefined || Number(offsetHours) < 16;
      },
    })
    .addFormat('date', {
      type: 'string',
      validate: (value: string) => fullDate.validate(value) && !value.startsWith('0000'),
    })
    .addFormat('uuid', /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i);
}

export type Validator = (value: unknown) => unknown;

function toDetails(where: string, errors: ErrorObject[] | null | undefined): ErrorDetail[] {
  return (errors ?? []).map((e) => {
    const extra = e.params as { additionalProperty?: string; missingProperty?: string };
    const name = extra.additionalProperty ?? extra.missingProperty;
    const path = [where, ...e.instancePath.split('/').filter(Boolean), ...(name ? [name] : [])].join('.');
    const message = extra.additionalProperty ? 'is not an allowed field' : (e.message ?? 'is invalid');
    return { field: path, message };
  });
}

/**
 * Where in `value` a string (or a key) holds the NUL character, or undefined. Iterative, so no
 * value can exhaust the stack, whatever its depth.
 */
function nulPath(value: unknown): string[] | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.path[next.path.length - 1]?.includes('\u0000')) return next.path;
    if (typeof next.value === 'string') {
      if (next.value.includes('\u0000')) return next.path;
    } else if (next.value && typeof next.value === 'object') {
      // Reversed onto the stack: fields are checked in document order, each before what it holds.
      const entries = Object.entries(next.value);
      for (let i = entries.length - 1; i >= 0; i--) {
        pending.push({ value: entries[i][1], path: [...next.path, entries[i][0]] });
      }
    }
  }
  return undefined;
}

/**
 * Refuses input holding the NUL character: PostgreSQL stores none in text or jsonb, so it is the
 * caller's mistake, answered here for every route rather than failing in the database as the
 * server's. `text` is the value as JSON: JSON writes NUL only as the escape \u0000, so text without
 * one holds none (one native pass; a body passes the text it arrived as). Text that only looks
 * like it (an escaped backslash before u0000) is a false alarm the walk then clears; the walk
 * alone builds paths, so a large body is not walked at all.
 */
export function refuseNul(
  where: 'params' | 'query' | 'body',
  value: unknown,
  text: string | undefined = JSON.stringify(value),
): void {
  if (!text?.includes('\\u0000')) return;
  const nul = nulPath(value);
  if (nul) {
    throw invalid(`Invalid ${where}`, [
      { field: [where, ...nul].join('.'), message: 'must not contain the NUL character (\\u0000)' },
    ]);
  }
}

/** A validator of one part of the request; bodies were already checked for NUL as they were read. */
function compile(ajv: Ajv, where: 'params' | 'query' | 'body', schema: Schema): Validator {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (where !== 'body') refuseNul(where, value);
    if (!validate(value)) throw invalid(`Invalid ${where}`, toDetails(where, validate.errors));
    return value;
  };
}

export const compileParams = (schema: Schema) => compile(stringInputAjv, 'params', schema);
export const compileQuery = (schema: Schema) => compile(stringInputAjv, 'query', schema);

/** A route with a body schema requires a body (unless optional: then `{}`); one without rejects any body. */
export function compileBody(schema: Schema | undefined, optional = false): Validator {
  if (!schema) {
    return (value) => {
      if (value !== undefined) throw invalid('This endpoint takes no request body');
      return undefined;
    };
  }
  const validate = compile(bodyAjv, 'body', schema);
  return (value) => {
    if (value === undefined) {
      if (optional) return validate({});
      throw invalid('A JSON request body is required');
    }
    return validate(value);
  };
}
