import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { egressRefusal, parseHttpUrl, type EgressAllowList } from './egressRules';

// The one HTTP client for requests made on a tenant's behalf (forge actions today; webhooks,
// integration sync and the crawler next). It resolves each host once, refuses it unless every
// address is allowed (./egressRules.ts), connects to exactly the addresses it checked (no second
// DNS answer can rebind it), follows redirects itself so each hop is checked, and reads at most
// a capped number of bytes of the answer within one time limit.

/** How a request failed; callers decide from it whether trying again can help. */
export type EgressFailure = 'refused' | 'invalid-url' | 'too-many-redirects' | 'timeout' | 'network';

export class EgressError extends Error {
  constructor(
    readonly failure: EgressFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'EgressError';
  }
}

export interface EgressRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** For everything: resolving, connecting, every redirect and reading the body. */
  timeoutMs: number;
  /** Bytes of the body kept; past them the connection is closed and the answer `truncated`. */
  maxBodyBytes: number;
  /** The caller's cancellation: the request is aborted and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Answer headers the caller reads (lower-case names, e.g. `retry-after`): returned as `headers`. */
  responseHeaders?: string[];
}

export interface EgressResponse {
  status: number;
  /** UTF-8, at most maxBodyBytes (a character cut at the cap is left out). */
  body: string;
  truncated: boolean;
  /** The answer's values of the `responseHeaders` asked for that it has. */
  headers?: Record<string, string>;
}

/** Resolves a host name to every address it has (the system resolver, /etc/hosts included). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Sent again only to the origin they were meant for.
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
// Dropped with the body when a redirect turns a request into a GET (the fetch standard's list).
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];

/** One request of a redirect chain, as it is sent. */
interface Hop {
  url: URL;
  method: string;
  /** Names lower-cased. */
  headers: Record<string, string>;
  body?: string;
}

const without = (headers: Record<string, string>, names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));

function httpUrl(text: string, base?: URL): URL {
  const url = parseHttpUrl(text, base);
  if (!url) throw new EgressError('invalid-url', `"${text}" is not an absolute http(s) URL`);
  return url;
}

/** Settles with `work`, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Reads up to `maxBytes`; with more to come it stops and destroys the response, closing its connection. */
async function readCapped(response: IncomingMessage, maxBytes: number): Promise<{ body: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    if (size + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - size));
      // Leaving the loop destroys the response, and with it the socket (no agent keeps it).
      return { body: new StringDecoder('utf8').write(Buffer.concat(chunks)), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: new StringDecoder('utf8').write(Buffer.concat(chunks)), truncated: false };
}

export interface EgressClient {
  request(request: EgressRequest): Promise<EgressResponse>;
}

const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/** A client bound to an allow-list (parsed once per process); tests pass their own DNS as `resolve`. */
export function createEgressClient(allow: EgressAllowList, resolve: Resolve = systemResolve): EgressClient {
  /** The addresses of the URL's host, each checked; the first refused one refuses the host. */
  async function checkedAddresses(url: URL, signal: AbortSignal): Promise<LookupAddress[]> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await untilAborted(resolve(host), signal);
    for (const { address } of addresses) {
      const refusal = egressRefusal(allow, { host, port, address });
      if (refusal) throw new EgressError('refused', refusal);
    }
    return addresses;
  }

  /** One hop: connects only to `addresses`; TLS still verifies the URL's host name. */
  function send({ url, method, headers, body }: Hop, addresses: LookupAddress[], signal: AbortSignal) {
    // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
    const checkedLookup: LookupFunction = (_host, options, callback) =>
      options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = client.request(url, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: checkedLookup,
        // A connection of its own, closed with the response: none is reused for another host's checks.
        agent: false,
        signal,
      });
      request.on('response', resolve).on('error', reject);
      request.end(body);
    });
  }

  async function follow(request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    const lowerCased = Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]);
    const hop: Hop = {
      url: httpUrl(request.url),
      method: request.method,
      headers: Object.fromEntries(lowerCased),
      body: request.body,
    };
    for (let redirects = 0; ; redirects += 1) {
      const response = await send(hop, await checkedAddresses(hop.url, signal), signal);
      const status = response.statusCode ?? 0;
      const location = REDIRECT_STATUSES.has(status) ? response.headers.location : undefined;
      if (location === undefined) {
        const read = await readCapped(response, request.maxBodyBytes);
        if (!request.responseHeaders) return { status, ...read };
        const headers = Object.fromEntries(
          request.responseHeaders.flatMap((name) => {
            const value = response.headers[name];
            return value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]];
          }),
        );
        return { status, ...read, headers };
      }
      response.destroy();
      if (redirects === MAX_REDIRECTS) {
        throw new EgressError(
          'too-many-redirects',
          `${request.method} ${request.url} redirected more than ${MAX_REDIRECTS} times`,
        );
      }
      const next = httpUrl(location, hop.url);
      if (next.origin !== hop.url.origin) hop.headers = without(hop.headers, CREDENTIAL_HEADERS);
      // As fetch does: a 303 becomes a GET (but HEAD), and so does a POST answered 301 or 302.
      if (
        (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD') ||
        ((status === 301 || status === 302) && hop.method === 'POST')
      ) {
        Object.assign(hop, { method: 'GET', body: undefined, headers: without(hop.headers, BODY_HEADERS) });
      }
      hop.url = next;
    }
  }

  return {
    async request(request) {
      const timeout = AbortSignal.timeout(request.timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      try {
        return await follow(request, signal);
      } catch (err) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (err instanceof EgressError) throw err;
        const what = `${request.method} ${request.url}`;
        if (timeout.aborted)
          throw new EgressError('timeout', `${what} timed out after ${request.timeoutMs / 1000} s`, { cause: err });
        throw new EgressError('network', `${what} failed: ${(err as Error).message}`, { cause: err });
      }
    },
  };
}
