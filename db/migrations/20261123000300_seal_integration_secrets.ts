import type { Knex } from 'knex';
import { migrationServices, type IntegrationSecrets } from '../knexfile';

// Integration secrets were stored in plain JSON until they were sealed (core/crypto): this seals
// those still plain, so the migration needs the API's keys (SHIPYARD_ENCRYPTION_KEYS, or the
// dev key in the data folder), which the runner hands in (MigrationServices, db/knexfile.ts).
// Forced row-level security hides every row from the owner too; lifting it inside this
// migration's transaction lets the owner reach every tenant's rows, and no other session sees
// the gap.

/** Rewrites each integration's config that `reseal` changes (undefined: left as it is). */
async function resealEach(knex: Knex, reseal: IntegrationSecrets['sealPlain']): Promise<void> {
  await knex.raw('alter table integrations no force row level security');
  const rows: { id: string; tenant_id: string; config: Record<string, unknown> }[] = await knex('integrations').select(
    'id',
    'tenant_id',
    'config',
  );
  for (const row of rows) {
    const config = reseal(row.config, row.tenant_id);
    if (config) await knex('integrations').where({ id: row.id }).update({ config });
  }
  await knex.raw('alter table integrations force row level security');
}

export async function up(knex: Knex): Promise<void> {
  await resealEach(knex, migrationServices(knex).integrationSecrets().sealPlain);
}

/** Back to plain JSON, which the code before this migration reads (every key that sealed them is needed). */
export async function down(knex: Knex): Promise<void> {
  await resealEach(knex, migrationServices(knex).integrationSecrets().open);
}
