import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import pino from 'pino';
import { buildApp } from '../../api/app';
import { closeDeps, createDeps } from '../../api/deps';
import type { Config } from '../../core/config';
import { get } from './load';

// The floor of an HTTP read: the statements the API sends for it, captured from an in-process
// API, to replay through raw `pg` in the same tenant transaction.

export interface Statement {
  sql: string;
  bindings: unknown[];
}

/**
 * What the API sends to the database for `path`: its tenant BEGIN and the statements before
 * its COMMIT (the transaction of its first query on `table`). The API runs in this process for
 * the capture only.
 */
async function captureStatements(
  config: Config,
  path: string,
  authorization: string,
  table = 'entities',
): Promise<{ begin: string; statements: Statement[] }> {
  const deps = await createDeps(config, pino({ level: 'silent' }));
  const server = createServer(buildApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sent: { sql: string; bindings?: unknown[] }[] = [];
  const record = (query: (typeof sent)[number]) => sent.push(query);
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    await get(url, { authorization }); // warms the key cache: the recorded request is a cached one
    deps.db.on('query', record);
    await get(url, { authorization });
  } finally {
    deps.db.off('query', record);
    server.close();
    await closeDeps(deps);
  }
  // The one request's transaction: BEGIN with the tenant setting, its statements, COMMIT.
  const entityQuery = sent.findIndex((q) => q.sql.includes(`from "${table}"`));
  if (entityQuery < 0) throw new Error(`${path} sent no query on ${table}`);
  const start = sent.findLastIndex((q, i) => i < entityQuery && q.sql.startsWith('begin; set local app.tenant_id'));
  const end = sent.findIndex((q, i) => i > entityQuery && q.sql === 'COMMIT;');
  if (start < 0 || end < 0) {
    throw new Error(`unexpected transaction shape: ${sent.map((q) => q.sql).join(' | ')}`);
  }
  // knex reports each statement as it sent it: placeholders already numbered ($1, …).
  return {
    begin: sent[start].sql,
    statements: sent.slice(start + 1, end).map((q) => ({ sql: q.sql, bindings: q.bindings ?? [] })),
  };
}

/**
 * The floor of `path`: one call replays the statements the API sends for it (captured once, see
 * captureStatements) through raw `pg`, in the same tenant transaction.
 */
export async function capturedFloor(
  config: Config,
  pg: Pool,
  path: string,
  authorization: string,
  table?: string,
): Promise<() => Promise<void>> {
  const { begin, statements } = await captureStatements(config, path, authorization, table);
  return async () => {
    const client = await pg.connect();
    try {
      await client.query(begin);
      for (const statement of statements) await client.query(statement.sql, statement.bindings);
      await client.query('commit');
    } finally {
      client.release();
    }
  };
}
