import type { Config } from '../../core/config';
import { issueDevToken } from '../cli/devToken';
import { seedCatalog } from '../cli/seedCatalog';

// The tenant the catalog and search benchmarks read: ENTITIES seeded entities (npm run seed).
export const ENTITIES = Number(process.env.BENCH_ENTITIES ?? 100_000);
export const TENANT = process.env.BENCH_TENANT ?? 'bench-catalog';

/** Seeds the tenant unless it already holds ENTITIES entities (seeding is idempotent anyway, but slower). */
export async function ensureCatalog(config: Config): Promise<void> {
  const started = Date.now();
  const result = await seedCatalog(config, { tenant: TENANT, entities: ENTITIES });
  if (result.entities > 0) {
    console.log(`seeded ${result.entities} entities into ${TENANT} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

/** The seeded catalog tenant and an admin's session token in it: what a read benchmark starts from. */
export async function catalogAdmin(config: Config): Promise<{ token: string; tenantId: string }> {
  await ensureCatalog(config);
  return issueDevToken(config, { tenant: TENANT, email: 'bench@bench.test', roles: ['admin'] });
}
