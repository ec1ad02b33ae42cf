import knex from 'knex';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../core/config';
import { migrationConfig } from '../../db/knexfile';
import { bundleWorkflows } from '../../workers/pools';
import { applyTestEnv, WORKFLOW_BUNDLE_PATH } from './testEnv';

/**
 * Once per run, before any integration or e2e test: brings the test database's schema up to
 * date and bundles the workflow code once for every in-process test worker.
 */
export default async function globalSetup(): Promise<void> {
  applyTestEnv();
  const db = knex(migrationConfig(loadConfig().database.ownerUrl));
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
