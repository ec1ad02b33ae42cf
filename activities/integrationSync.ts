import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import { EgressError } from '../core/egress/egressClient';
import { IncidentToolError } from '../core/incidents/client';
import { syncIncidentTool } from '../core/incidents/sync';
import { getIntegration, openConfig, type IntegrationRow } from '../core/integrations/store';
import type { IntegrationSyncResult, SyncTickPage } from '../core/integrations/syncControl';
import {
  interleaveByTenant,
  isSyncedType,
  SYNC_TICK_PAGE,
  syncWorkflowId,
  type SyncTarget,
} from '../core/integrations/syncRules';
import { recordSyncFailure, recordSyncSuccess, syncTargets } from '../core/integrations/syncStore';
import { KeyedGate } from '../core/keyedGate';
import { SourceHostError } from '../core/sourceHost/client';
import { withTenant } from '../db/tenancy';
import { syncTenant } from '../search/crawl';
import type { ActivityDeps } from './deps';

// Integration sync on the platform pool (workflows/integrationSync.ts): pull from the
// integration's system, then record the outcome on it. What the third party or the way to it
// refuses is an outcome (status `error` with why); anything else throws, for the retries.

/** The reason an upstream failure gives: our own messages, which name no secret and quote no body. */
const upstreamFailure = (err: unknown): string | undefined =>
  err instanceof IncidentToolError || err instanceof SourceHostError || err instanceof EgressError
    ? err.message
    : undefined;

type Pull = { counts: Record<string, number> } | { failure: string };

async function pull(deps: ActivityDeps, integration: IntegrationRow): Promise<Pull> {
  if (integration.type === 'vcs-host-a') {
    // The crawler's own repository sync, for this integration; the crawl of each repository's
    // documentation stays the search pool's.
    const { due, removed, sync_error } = await syncTenant(deps, integration.tenant_id, integration.id);
    return sync_error
      ? { failure: sync_error }
      : { counts: { repositories_due: due.length, repositories_removed: removed } };
  }
  try {
    const counts = await syncIncidentTool(
      { db: deps.db, egress: deps.egress, lookbackMs: deps.config.integrations.incidentLookbackMs },
      integration.tenant_id,
      { id: integration.id, config: openConfig(deps.keyring, integration) },
    );
    return { counts };
  } catch (err) {
    const failure = upstreamFailure(err);
    if (failure === undefined) throw err;
    return { failure };
  }
}

export function createIntegrationSyncActivities(deps: ActivityDeps) {
  // A tenant's share of this worker's syncs; one over it is retried later (the workflow's policy).
  const slots = new KeyedGate(deps.config.integrations.syncSlotsPerTenant);
  const inTenant = <T>(tenantId: string, work: (trx: Knex.Transaction) => Promise<T>) =>
    withTenant(deps.db, tenantId, work);
  return {
    async syncIntegration({ tenantId, integrationId }: SyncTarget): Promise<IntegrationSyncResult> {
      const release = await slots.enter(tenantId, 0);
      if (!release) throw ApplicationFailure.retryable("the tenant's sync slots are all in use", 'SyncSlotsTaken');
      try {
        const integration = await inTenant(tenantId, (trx) => getIntegration(trx, integrationId));
        if (!integration || integration.status === 'inactive' || !isSyncedType(integration.type))
          return { status: 'skipped', counts: {} };
        const outcome = await pull(deps, integration);
        if ('failure' in outcome) {
          await inTenant(tenantId, (trx) => recordSyncFailure(trx, integrationId, outcome.failure));
          return { status: 'error', counts: {} };
        }
        await inTenant(tenantId, (trx) => recordSyncSuccess(trx, integrationId));
        return { status: 'active', counts: outcome.counts };
      } finally {
        release();
      }
    },
    /** The sync failed inside Shipyard, past its retries: recorded without the internal error. */
    async recordSyncGaveUp({ tenantId, integrationId }: SyncTarget): Promise<void> {
      await inTenant(tenantId, (trx) =>
        recordSyncFailure(trx, integrationId, 'the sync failed inside Shipyard; the next scheduled sync tries again'),
      );
    },
    /**
     * A page of every tenant's integrations to sync, round-robin by tenant (the system role reads
     * them), each with its sync's workflow id; and where the next page starts, when there is one.
     */
    async integrationsToSync({ offset }: { offset: number }): Promise<SyncTickPage> {
      const all = interleaveByTenant(await syncTargets(deps.system));
      const page = all.slice(offset, offset + SYNC_TICK_PAGE);
      return {
        syncs: page.map((target) => ({ target, workflowId: syncWorkflowId(target.integrationId) })),
        nextOffset: offset + page.length < all.length ? offset + page.length : null,
      };
    },
  };
}

export type IntegrationSyncActivities = ReturnType<typeof createIntegrationSyncActivities>;
