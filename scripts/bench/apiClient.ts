import { Agent, request, type IncomingMessage } from 'node:http';

// The forge benchmarks' HTTP client: node:http, not fetch, since the client shares the machine's
// two cores with what it measures, and fetch's own CPU (undici, web streams) is not the API's.

export interface BenchApi {
  /** The raw response; the caller reads or destroys its body. A RawText body is sent as it is. */
  send(method: string, path: string, body?: unknown): Promise<IncomingMessage>;
  /** The parsed body of a 2xx answer; anything else throws with the status and body. */
  call<T = { id: string; status: string }>(method: string, path: string, body?: unknown): Promise<T>;
  /** The status and drained body of any answer. */
  answer(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }>;
  /** The status a run's log stream (`follow=true`) ends with: its `end` event, as a user watching the run sees it. */
  streamedEnd(runId: string): Promise<string>;
}

/** A request body already written as JSON text (one JSON.stringify cannot write, say). */
export class RawText {
  constructor(readonly text: string) {}
}

export async function textOf(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

/** A kept-alive client of the API below `base` (`…/api/v1`), calling as the bearer of `token`. */
export function benchApi(base: string, token: string, timeoutMs = 30_000): BenchApi {
  const agent = new Agent({ keepAlive: true });
  const send = (method: string, path: string, body?: unknown) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const payload = body === undefined ? undefined : body instanceof RawText ? body.text : JSON.stringify(body);
      const req = request(`${base}${path}`, {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload !== undefined && { 'content-type': 'application/json' }),
        },
        timeout: timeoutMs,
      });
      req
        .on('response', resolve)
        .on('error', reject)
        .on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.end(payload);
    });
  const answer = async (method: string, path: string, body?: unknown) => {
    const res = await send(method, path, body);
    return { status: res.statusCode!, text: await textOf(res) };
  };
  return {
    send,
    answer,
    async call<T>(method: string, path: string, body?: unknown) {
      const { status, text } = await answer(method, path, body);
      if (status >= 300) throw new Error(`${method} ${path} answered ${status}: ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async streamedEnd(runId: string) {
      const res = await send('GET', `/forge/runs/${runId}/logs?follow=true`);
      if (res.statusCode !== 200) throw new Error(`the log stream of run ${runId} answered ${res.statusCode}`);
      res.setEncoding('utf8');
      let text = '';
      for await (const chunk of res) {
        text += chunk;
        const end = /event: end\ndata: (.*)\n\n/.exec(text);
        if (end) {
          res.destroy();
          return (JSON.parse(end[1]) as { status: string }).status;
        }
      }
      throw new Error(`the log stream of run ${runId} closed without its end event`);
    },
  };
}
