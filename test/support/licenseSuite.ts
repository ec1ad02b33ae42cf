import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { sha256 } from '../../core/auth/tokens';
import type { LicensePayload } from '../../core/license/keys';
import { withTenant } from '../../db/tenancy';
import { mintDevLicenseKey } from '../../scripts/cli/licenseKey';
import { sessionToken, testConfig } from './harness';

// What the licensing tests set up behind the API: tenants with an admin and a viewer, license
// keys signed with the dev key, cluster agents (with their tokens) and parked registrations,
// written as the agents helper's registration would.

export interface LicenseTenant {
  tenantId: string;
  admin: string;
  viewer: string;
}

export async function licenseTenant(label: string): Promise<LicenseTenant> {
  const slug = `${label}-${randomUUID().slice(0, 8)}`;
  const admin = await sessionToken({ tenant: slug, email: `admin@${slug}.test`, roles: ['admin'] });
  const viewer = await sessionToken({ tenant: slug, email: `viewer@${slug}.test`, roles: ['viewer'] });
  return { tenantId: admin.tenantId, admin: admin.token, viewer: viewer.token };
}

export function devKey(payload: Partial<LicensePayload> = {}): string {
  return mintDevLicenseKey(testConfig(), {
    edition: 'standard',
    type: 'selfhosted',
    clusters: 0,
    nodes: 0,
    licensee: 'Acme',
    issued_at: new Date().toISOString(),
    expires_at: null,
    ...payload,
  });
}

/** A Beta key issued on 2026-05-01: floored to 2026-11-10, its free period is already over. */
export const endedBetaKey = () => devKey({ edition: 'beta', issued_at: '2026-05-01T00:00:00.000Z' });

export interface AgentSpec {
  clusterId: string;
  nodes: number;
  /** Seconds ago the agent registered. */
  ageSeconds: number;
  revoked?: boolean;
}

/** Registered agents with a token each (a revoked one when asked); returns the tokens. */
export async function insertAgents(db: Knex, tenantId: string, agents: AgentSpec[]): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  await withTenant(db, tenantId, async (trx) => {
    for (const agent of agents) {
      const token = `shp_agt_${randomBytes(24).toString('base64url')}`;
      tokens.set(agent.clusterId, token);
      const createdAt = trx.raw('now() - make_interval(secs => ?)', [agent.ageSeconds]);
      await trx('k8s_agents').insert({
        tenant_id: tenantId,
        cluster_id: agent.clusterId,
        display_name: agent.clusterId,
        node_count: agent.nodes,
        created_at: createdAt,
      });
      await trx('agent_tokens').insert({
        tenant_id: tenantId,
        cluster_id: agent.clusterId,
        token_sha256: sha256(token),
        revoked_at: agent.revoked ? trx.fn.now() : null,
      });
    }
  });
  return tokens;
}

/** The clusters of the tenant whose agent still holds an unrevoked token. */
export async function connectedClusters(db: Knex, tenantId: string): Promise<string[]> {
  const rows = await withTenant(db, tenantId, (trx) =>
    trx('agent_tokens').distinct('cluster_id').whereNull('revoked_at').orderBy('cluster_id'),
  );
  return rows.map((row: { cluster_id: string }) => row.cluster_id);
}

export async function insertPending(db: Knex, tenantId: string, clusterId: string, attempts = 1): Promise<void> {
  await withTenant(db, tenantId, (trx) =>
    trx('pending_cluster_registrations').insert({
      tenant_id: tenantId,
      cluster_id: clusterId,
      name: `Cluster ${clusterId}`,
      environment: 'prod',
      attempts,
    }),
  );
}

export async function auditTypes(db: Knex, tenantId: string): Promise<string[]> {
  const rows = await withTenant(db, tenantId, (trx) => trx('audit_log').select('event_type').orderBy('id'));
  return rows.map((row: { event_type: string }) => row.event_type);
}
