import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import knex from 'knex';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../core/config';
import { SEARCH_ATTRIBUTE_KEYS } from '../../core/searchAttributes';
import { migrationConfigFor } from '../../core/migrations';
import { createSearchEngine } from '../../search/client';
import { SEARCH_COLLECTIONS } from '../../search/collections';
import { aliasOf, versionedIndexOf } from '../../search/indices';
import { bundleWorkflows } from '../../workers/pools';
import { applyTestEnv, WORKFLOW_BUNDLE_PATH } from './testEnv';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/**
 * Registers our search attributes (core/searchAttributes.ts) in the suite's namespace, since
 * starting a workflow with one the namespace does not know fails. Idempotent: only the missing
 * ones are added; one registered with another type stops the run.
 */
async function ensureSearchAttributes(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address }).catch((err: Error) => {
    throw new Error(`temporal not reachable at ${address} (run scripts/services up): ${err.message}`, { cause: err });
  });
  try {
    const { customAttributes } = await connection.operatorService
      .listSearchAttributes({ namespace })
      .catch((err: Error) => {
        throw new Error(`cannot list the search attributes of temporal namespace ${namespace}: ${err.message}`, {
          cause: err,
        });
      });
    const missing: Record<string, typeof KEYWORD> = {};
    for (const { name } of SEARCH_ATTRIBUTE_KEYS) {
      const type = customAttributes?.[name];
      if (type === undefined || type === null) missing[name] = KEYWORD;
      else if (type !== KEYWORD)
        throw new Error(`search attribute ${name} exists in ${namespace} with another type than Keyword`);
    }
    if (Object.keys(missing).length === 0) return;
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing }).catch((err) => {
      // Another run registering them at the same moment is fine.
      if (!/already exists/i.test((err as Error).message)) throw err;
    });
  } finally {
    await connection.close();
  }
}

/**
 * Drops the suite's indices that an older definition made (test data only): the suites then
 * create the current ones (ensureIndices) instead of writing to an index a changed mapping
 * refuses, as a deployment's reindex would move them.
 */
async function dropOutdatedTestIndices(config: ReturnType<typeof loadConfig>): Promise<void> {
  const engine = createSearchEngine(config);
  try {
    for (const collection of SEARCH_COLLECTIONS) {
      const alias = aliasOf(engine, collection);
      const aliased = await engine.client.indices.existsAlias({ name: alias });
      const behind = aliased ? Object.keys(await engine.client.indices.getAlias({ name: alias })) : [];
      if (behind.includes(versionedIndexOf(engine, collection))) continue;
      // Every version, the current one too: one made while the alias was taken would stay without it.
      await engine.client.indices.delete({ index: `${alias}_v*`, allow_no_indices: true });
    }
  } finally {
    await engine.client.close();
  }
}

/**
 * Once per run, before any integration or e2e test: brings the test database's schema and the
 * test indices up to date, registers the search attributes in the suite's Temporal namespace and bundles the
 * workflow code once for every in-process test worker.
 */
export default async function globalSetup(): Promise<void> {
  applyTestEnv();
  const config = loadConfig();
  await ensureSearchAttributes(config.temporal.address, config.temporal.namespace);
  await dropOutdatedTestIndices(config);
  const db = knex(migrationConfigFor(config));
  try {
    await db.migrate.latest();
  } catch (err) {
    throw new Error(
      `test database not reachable or migration failed (run scripts/services up): ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  } finally {
    await db.destroy();
  }
  const { code } = await bundleWorkflows({
    trace() {},
    debug() {},
    info() {},
    warn() {},
    error: console.error,
    log() {},
  });
  await mkdir(path.dirname(WORKFLOW_BUNDLE_PATH), { recursive: true });
  await writeFile(WORKFLOW_BUNDLE_PATH, code);
}
