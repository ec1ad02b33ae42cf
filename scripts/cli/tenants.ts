import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { findTenantId } from '../../core/auth/store';
import { UUID } from '../../core/ids';
import { withTenant } from '../../db/tenancy';

/**
 * The id of the tenant `tenant` names (an id or a slug), created when it does not exist: a
 * slug becomes the new tenant's slug and name, an unknown id gets the slug `tenant-<first 8>`.
 */
export async function ensureTenant(app: Knex, system: Knex, tenant: string): Promise<string> {
  const tenantId = (await findTenantId(system, tenant)) ?? (UUID.test(tenant) ? tenant : randomUUID());
  const slug = UUID.test(tenant) ? `tenant-${tenantId.slice(0, 8)}` : tenant;
  await withTenant(app, tenantId, (trx) =>
    trx('tenants').insert({ id: tenantId, slug, name: slug }).onConflict('id').ignore(),
  );
  return tenantId;
}
