import type { EgressClient } from './egressClient';

// The one way our clients of third-party REST APIs (the source host, the incident tool) read
// JSON: a bearer-token GET through the egress guard, bounded in time and bytes, every failure
// turned into the client's own error with a message that names the route, never the token or
// the body.

export interface BearerJsonGet {
  /** The API root, without a trailing slash. */
  baseUrl: string;
  /** From the root, with its query; the message names it without the query. */
  path: string;
  token: string;
  /** Who answers, for messages: `the source host answered 502 to GET /user/repos`. */
  name: string;
  timeoutMs: number;
  maxBodyBytes: number;
  signal?: AbortSignal;
  /** Error statuses that are answers: the value given for each is returned instead of failing. */
  answers?: Partial<Record<number, unknown>>;
  /** Returned for an answer over maxBodyBytes, when given; else that fails. */
  oversized?: unknown;
}

export async function getBearerJson(
  egress: EgressClient,
  { baseUrl, path, token, name, timeoutMs, maxBodyBytes, signal, answers = {}, oversized }: BearerJsonGet,
  fail: (status: number | undefined, message: string) => Error,
): Promise<unknown> {
  const route = path.split('?')[0];
  const res = await egress.request({
    method: 'GET',
    url: `${baseUrl}${path}`,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    timeoutMs,
    maxBodyBytes,
    signal,
  });
  if (res.status in answers && answers[res.status] !== undefined) return answers[res.status];
  if (res.status < 200 || res.status > 299) throw fail(res.status, `${name} answered ${res.status} to GET ${route}`);
  if (res.truncated) {
    if (oversized !== undefined) return oversized;
    throw fail(undefined, `the answer to GET ${route} is over ${maxBodyBytes} bytes`);
  }
  try {
    return JSON.parse(res.body);
  } catch {
    throw fail(undefined, `the answer to GET ${route} is not JSON`);
  }
}
