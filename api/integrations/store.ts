import type { Knex } from 'knex';
import { SECRET_CONFIG_KEYS, type IntegrationType } from './schemas';

export interface IntegrationRow {
  id: string;
  name: string;
  type: IntegrationType;
  status: 'active' | 'inactive' | 'error';
  config: Record<string, unknown>;
  last_sync: Date | null;
  created_at: Date;
  updated_at: Date;
}

const SECRET_KEYS: ReadonlySet<string> = new Set(SECRET_CONFIG_KEYS);
const COLUMNS = ['id', 'name', 'type', 'status', 'config', 'last_sync', 'created_at', 'updated_at'];
const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

/** The response shape: config without its secrets, and the names of the secrets that are set. */
export function toIntegration(row: IntegrationRow) {
  const config = Object.fromEntries(Object.entries(row.config).filter(([key]) => !SECRET_KEYS.has(key)));
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    status: row.status,
    config,
    secrets: Object.keys(row.config).filter((key) => SECRET_KEYS.has(key)),
    last_sync: iso(row.last_sync),
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

/**
 * A replacement config keeps the stored secrets it does not mention, so a client can send back
 * what it read (which never holds secrets) without erasing the credentials.
 */
export function mergeConfig(stored: Record<string, unknown>, replacement: Record<string, unknown>): Record<string, unknown> {
  const kept = Object.entries(stored).filter(([key]) => SECRET_KEYS.has(key) && !(key in replacement));
  return { ...Object.fromEntries(kept), ...replacement };
}

export async function listIntegrations(trx: Knex): Promise<IntegrationRow[]> {
  return trx('integrations').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).select(COLUMNS);
}

export async function getIntegration(trx: Knex, id: string): Promise<IntegrationRow | undefined> {
  return trx('integrations').where({ id }).first(COLUMNS);
}

export async function insertIntegration(
  trx: Knex,
  tenantId: string,
  integration: { name: string; type: IntegrationType; config: Record<string, unknown> },
): Promise<IntegrationRow> {
  const [row] = await trx('integrations').insert({ tenant_id: tenantId, ...integration }).returning(COLUMNS);
  return row;
}

export async function updateIntegration(
  trx: Knex,
  id: string,
  changes: { name?: string; status?: string; config?: Record<string, unknown> },
): Promise<IntegrationRow | undefined> {
  const [row] = await trx('integrations')
    .where({ id })
    .update({ ...changes, updated_at: trx.fn.now() })
    .returning(COLUMNS);
  return row;
}

export async function deleteIntegration(trx: Knex, id: string): Promise<boolean> {
  return (await trx('integrations').where({ id }).delete()) > 0;
}

/**
 * The integration a source-host action uses: the one named, or else the tenant's only active
 * one of that type. Returns why not when there is none to use.
 */
export async function activeIntegrationOfType(
  trx: Knex,
  type: IntegrationType,
  id?: string,
): Promise<{ integration: IntegrationRow } | { problem: string }> {
  const query = trx('integrations').where({ type });
  const rows: IntegrationRow[] = await (id ? query.where({ id }) : query.where({ status: 'active' })).select(COLUMNS);
  if (id) {
    if (!rows.length) return { problem: `integration ${id} is not a ${type} integration of this tenant` };
    if (rows[0].status !== 'active') return { problem: `integration ${rows[0].name} is ${rows[0].status}` };
    return { integration: rows[0] };
  }
  if (rows.length === 1) return { integration: rows[0] };
  return {
    problem: rows.length
      ? `${rows.length} active ${type} integrations; set integration_id on the action`
      : `no active ${type} integration; create one under /integrations`,
  };
}
