import type { Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../core/config';
import type { Keyring } from '../core/crypto/keyring';
import { getIntegration, openConfig } from '../core/integrations/store';
import { crawlDueNow, removeRepository, resetForRecrawl, upsertRepository } from '../core/repositories/store';
import { signatureMatches, type ReceiverEvent } from '../core/sourceHost/receiverRules';
import { pruneDeliveries, recordDelivery, sourceHostIntegrationTenant } from '../core/sourceHost/receiverStore';
import { withTenant } from '../db/tenancy';
import type { SearchEngine } from './client';
import { removeDocs } from './crawl';
import { crawlPushedRepository } from './crawlControl';

// The source-host receiver's work (POST /integrations/vcs-host-a/webhook,
// docs/source-host-receiver.md): a delivery's tenant and secret, its signature, then what its
// event changes, in that tenant's transaction with the record of its delivery id. Here rather
// than in core/ because a repository's removal deletes its documents from the engine.

export interface ReceiverDeps {
  db: Knex;
  system: Knex;
  search: SearchEngine;
  temporal: TemporalClient;
  keyring: Keyring;
  config: Pick<Config, 'receiver'>;
}

/**
 * Stands in for the secret of an integration that does not exist, is inactive or has none, so
 * that such a delivery is refused after the same HMAC work as one with a wrong signature.
 */
const NO_SECRET = 'no webhook secret: this signature matches nothing';

/**
 * The tenant of a delivery signed with its integration's `webhook_secret`; undefined when the
 * integration is unknown (or not vcs-host-a), inactive, has no secret, or the signature does not
 * match: the caller answers each with the same 401.
 */
export async function authenticateDelivery(
  deps: ReceiverDeps,
  delivery: { integrationId: string; body: Buffer; signature: string | undefined },
): Promise<string | undefined> {
  const tenantId = await sourceHostIntegrationTenant(deps.system, delivery.integrationId);
  const secret =
    tenantId &&
    (await withTenant(deps.db, tenantId, async (trx) => {
      const row = await getIntegration(trx, delivery.integrationId);
      if (!row || row.status === 'inactive') return undefined;
      const { webhook_secret } = openConfig(deps.keyring, row);
      return typeof webhook_secret === 'string' && webhook_secret ? webhook_secret : undefined;
    }));
  const signed = signatureMatches(secret || NO_SECRET, delivery.body, delivery.signature);
  return signed && secret ? tenantId : undefined;
}

export interface ReceivedDelivery {
  tenantId: string;
  integrationId: string;
  deliveryId: string;
  /** The event's name as the host sent it. */
  event: string;
  what: ReceiverEvent;
}

export interface DeliveryOutcome {
  /** `duplicate`: the delivery id was processed before; `ignored`: an event or action that changes nothing here. */
  status: 'processed' | 'duplicate' | 'ignored';
  event: string;
  /** The repository the event changed, when it names one that Shipyard keeps. */
  repository_id?: string;
  /**
   * Its documentation is crawled again: `started` (or queued behind the tenant's push crawl
   * under way), or `scheduled` when the crawl could not be started: the repository is due, and
   * the hourly tick crawls it.
   */
  crawl?: 'started' | 'scheduled';
}

/** What an event changes in the tenant's transaction; `crawl`: the repository to crawl after the commit. */
async function apply(
  trx: Knex,
  deps: ReceiverDeps,
  { tenantId, integrationId, event, what }: ReceivedDelivery,
): Promise<{ outcome: DeliveryOutcome; crawl?: string }> {
  const processed = { status: 'processed', event } as const;
  switch (what.kind) {
    case 'ping':
      return { outcome: processed };
    case 'ignored':
      return { outcome: { status: 'ignored', event } };
    case 'push': {
      if (!what.crawl) return { outcome: processed };
      const { id } = await upsertRepository(trx, tenantId, integrationId, what.repository);
      // Should the crawl not start, the fallback tick crawls it.
      await crawlDueNow(trx, id);
      return { outcome: { ...processed, repository_id: id }, crawl: id };
    }
    case 'repository': {
      if (what.action === 'deleted') {
        const { removedDocIds } = await removeRepository(trx, what.repository.full_name);
        await removeDocs(trx, deps.search, removedDocIds);
        return { outcome: processed };
      }
      const { id, removedDocIds } = await upsertRepository(
        trx,
        tenantId,
        integrationId,
        what.repository,
        what.previousFullName,
      );
      await removeDocs(trx, deps.search, removedDocIds);
      // Documents carry the repository's name: a renamed or moved one's are all written again.
      if (what.previousFullName) await resetForRecrawl(trx, [what.repository.full_name]);
      const crawl = what.action === 'created' || what.previousFullName ? id : undefined;
      return { outcome: { ...processed, repository_id: id }, crawl };
    }
  }
}

/**
 * Processes an authenticated delivery once: its id is recorded in the transaction that applies
 * it, so a redelivery (or a copy arriving at the same moment) is a `duplicate` that changes
 * nothing. A crawl it asks for starts after the commit.
 */
export async function receiveDelivery(
  deps: ReceiverDeps,
  delivery: ReceivedDelivery,
  onCrawlNotStarted: (err: unknown) => void,
): Promise<DeliveryOutcome> {
  const { tenantId, integrationId, deliveryId, event } = delivery;
  const { outcome, crawl } = await withTenant(deps.db, tenantId, async (trx) => {
    if (!(await recordDelivery(trx, { tenantId, integrationId, deliveryId, event }))) {
      return { outcome: { status: 'duplicate', event } satisfies DeliveryOutcome };
    }
    await pruneDeliveries(trx, integrationId, deps.config.receiver.deliveryRetentionDays);
    return apply(trx, deps, delivery);
  });
  if (!crawl) return outcome;
  const started = await crawlPushedRepository(deps.temporal, tenantId, crawl).then(
    () => true,
    (err: unknown) => {
      onCrawlNotStarted(err);
      return false;
    },
  );
  return { ...outcome, crawl: started ? 'started' : 'scheduled' };
}
