import type { Knex } from 'knex';
import type { Keyring } from '../crypto/keyring';
import { maskSecrets, openSecrets, sealSecrets } from '../crypto/secretConfig';
import { keysetStatement, type KeysetOrder } from '../paging';
import { statement } from '../../db/statements';
import { isSyncedType } from './syncRules';
import type { IntegrationStatus, IntegrationType } from './types';
import { toIso, toIsoOrNull } from '../timestamps';

// Integrations' SQL. Secrets in `config` are sealed on the way in (core/crypto/secretConfig.ts)
// and opened only for the code that uses them: the forge activity and an update's merge.

export interface IntegrationRow {
  id: string;
  tenant_id: string;
  name: string;
  type: IntegrationType;
  status: IntegrationStatus;
  /** Secret values sealed. */
  config: Record<string, unknown>;
  last_sync: Date | null;
  /** Why the last sync failed (status `error`); null otherwise. Never a secret or a raw answer. */
  status_message: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'type',
  'status',
  'config',
  'last_sync',
  'status_message',
  'created_at',
  'updated_at',
];

/** The response shape: config without its secrets, and the paths of the secrets that are set. */
export function toIntegration(row: IntegrationRow) {
  const { config, secrets } = maskSecrets(row.config);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    status: row.status,
    config,
    secrets,
    last_sync: toIsoOrNull(row.last_sync),
    status_message: row.status_message,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** The stored config with its secrets in the clear. */
export const openConfig = (keyring: Keyring, row: IntegrationRow) => openSecrets(keyring, row.config, row.tenant_id);

/** Newest first. */
const LIST_ORDER: KeysetOrder = {
  columns: [
    { column: 'created_at', kind: 'timestamp' },
    { column: 'id', kind: 'uuid' },
  ],
  direction: 'desc',
};

/** A page of the tenant's integrations, as listed (secrets masked). */
export const listIntegrations = keysetStatement({
  order: LIST_ORDER,
  build: (q) => q('integrations').select(COLUMNS),
  toItem: toIntegration,
});

/**
 * GET /integrations/configs' item: what a tenant admin configured (every integration is one:
 * Shipyard creates none itself), secrets masked, and whether a sync pulls from it.
 */
export function toIntegrationConfig(row: IntegrationRow) {
  const { id, name, type, status, config, secrets } = toIntegration(row);
  return { id, name, type, status, config, secrets, synced: isSyncedType(type) };
}

/** A page of the tenant's configurations, newest first. */
export const listIntegrationConfigs = keysetStatement({
  order: LIST_ORDER,
  build: (q) => q('integrations').select(COLUMNS),
  toItem: toIntegrationConfig,
});

const integrationById = statement<IntegrationRow, { id: string }>((q, { id }) =>
  q('integrations').where({ id }).first(COLUMNS),
);

export async function getIntegration(trx: Knex, id: string): Promise<IntegrationRow | undefined> {
  return integrationById.first(trx, { id });
}

/** `config` in the clear; its secrets are sealed with the keyring's current key. */
export async function insertIntegration(
  trx: Knex,
  keyring: Keyring,
  tenantId: string,
  integration: { name: string; type: IntegrationType; config: Record<string, unknown> },
): Promise<IntegrationRow> {
  const config = sealSecrets(keyring, integration.config, tenantId);
  const [row] = await trx('integrations')
    .insert({ tenant_id: tenantId, ...integration, config })
    .returning(COLUMNS);
  return row;
}

/**
 * A new `config` (in the clear) replaces the stored one, every secret sealed afresh. A status set
 * by hand drops the last sync's message: it described the status being replaced.
 */
export async function updateIntegration(
  trx: Knex,
  keyring: Keyring,
  stored: IntegrationRow,
  changes: { name?: string; status?: IntegrationStatus; config?: Record<string, unknown> },
): Promise<IntegrationRow | undefined> {
  const config = changes.config && sealSecrets(keyring, changes.config, stored.tenant_id);
  const [row] = await trx('integrations')
    .where({ id: stored.id })
    .update({
      ...changes,
      config,
      ...(changes.status && { status_message: null }),
      updated_at: trx.fn.now(),
    })
    .returning(COLUMNS);
  return row;
}

export async function deleteIntegration(trx: Knex, id: string): Promise<boolean> {
  return (await trx('integrations').where({ id }).delete()) > 0;
}

/**
 * A type's integrations: the one named (`id`, bound only then) or those in use. `error` is in
 * use: it only says the last sync failed, and the next may succeed.
 */
const integrationsOfType = statement<IntegrationRow, { type: IntegrationType; id?: string }, 'named' | 'inUse'>(
  (q, values, which) => {
    const query = q('integrations').where({ type: values.type }).select(COLUMNS);
    return which === 'named' ? query.where({ id: values.id }) : query.whereNot({ status: 'inactive' });
  },
);

/**
 * The integration a source-host action uses, its secrets opened: the one named, or else the
 * tenant's only one of that type in use (not `inactive`). Returns why not when there is none to use.
 */
export async function activeIntegrationOfType(
  trx: Knex,
  keyring: Keyring,
  type: IntegrationType,
  id?: string,
): Promise<{ integration: IntegrationRow } | { problem: string }> {
  const rows = await integrationsOfType.rows(trx, id ? { type, id } : { type }, id ? 'named' : 'inUse');
  const opened = (row: IntegrationRow) => ({ integration: { ...row, config: openConfig(keyring, row) } });
  if (id) {
    if (!rows.length) return { problem: `integration ${id} is not a ${type} integration of this tenant` };
    if (rows[0].status === 'inactive') return { problem: `integration ${rows[0].name} is inactive` };
    return opened(rows[0]);
  }
  if (rows.length === 1) return opened(rows[0]);
  return {
    problem: rows.length
      ? `${rows.length} active ${type} integrations; set integration_id on the action`
      : `no active ${type} integration; create one under /integrations`,
  };
}
