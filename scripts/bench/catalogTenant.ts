import type { Config } from '../../core/config';
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

/** An API key with `scopes`, made through the API as the bearer of `token`, and its revocation. */
export async function benchApiKey(
  base: string,
  token: string,
  scopes: string[],
  name: string,
): Promise<{ token: string; revoke(): Promise<void> }> {
  const session = { authorization: `Bearer ${token}` };
  const created = await fetch(`${base}/api/v1/admin/api-keys`, {
    method: 'POST',
    headers: { ...session, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `${name}-${Date.now()}`, scopes }),
  });
  if (created.status !== 201) throw new Error(`could not create the bench API key: ${created.status}`);
  const key = (await created.json()) as { id: string; token: string };
  return {
    token: key.token,
    async revoke() {
      await fetch(`${base}/api/v1/admin/api-keys/${key.id}`, { method: 'DELETE', headers: session });
    },
  };
}
