import type { Knex } from 'knex';
import type { EgressClient } from '../egress/egressClient';
import { withTenant } from '../../db/tenancy';
import { IncidentToolClient, IncidentToolError } from './client';
import { dropOncallOfOtherServices, entitiesByService, replaceOncall, upsertIncidents } from './store';

// An incident-tool-a sync: the tool's services, matched to entities by their tag
// (`incident-tool-a/service-id=<id>`), then for each matched service its incidents changed within
// the lookback (upserted: one resolved upstream is resolved here) and its on-call entries
// (replaced). Each service commits on its own, so a long sync holds no transaction while it waits
// on the tool. Tool and network failures throw (IncidentToolError, EgressError) for the caller
// to record on the integration.

export interface IncidentSyncDeps {
  db: Knex;
  egress: EgressClient;
  lookbackMs: number;
}

export async function syncIncidentTool(
  deps: IncidentSyncDeps,
  tenantId: string,
  integration: { id: string; config: Record<string, unknown> },
): Promise<Record<string, number>> {
  const { base_url: baseUrl, token } = integration.config;
  if (typeof baseUrl !== 'string' || typeof token !== 'string')
    throw new IncidentToolError(undefined, 'the integration config needs base_url and token');
  const client = new IncidentToolClient(deps.egress, { baseUrl, token });
  const services = await client.services();
  const byService = await withTenant(deps.db, tenantId, (trx) =>
    entitiesByService(
      trx,
      services.map((service) => service.id),
    ),
  );
  const since = new Date(Date.now() - deps.lookbackMs);
  const counts = { services: services.length, matched_services: byService.size, incidents: 0, oncall: 0 };
  for (const [serviceId, entityIds] of byService) {
    const [incidents, oncalls] = await Promise.all([client.incidents(serviceId, since), client.oncalls(serviceId)]);
    const target = { tenantId, integrationId: integration.id, entityIds };
    await withTenant(deps.db, tenantId, async (trx) => {
      counts.incidents += await upsertIncidents(trx, target, incidents);
      counts.oncall += await replaceOncall(trx, { ...target, serviceId }, oncalls);
    });
  }
  await withTenant(deps.db, tenantId, (trx) => dropOncallOfOtherServices(trx, integration.id, [...byService.keys()]));
  return counts;
}
