import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { UUID } from './ids';

// What an operator filters workflows by in the Temporal Web UI, and sees as columns of its
// workflow list once added there (docs/temporal-ui.md). Temporal indexes search attributes, so they bypass the payload codec and are
// stored and shown in the clear: only opaque ids go here (a tenant's and a mold's uuid) and the
// kind, never a name, slug, email or anything else a tenant wrote. Readable details go in the
// memo, which the codec encrypts.
//
// The names are registered (Keyword) by scripts/lib/temporal.sh, docker-compose.yml and the test
// suite's globalSetup; test/unit/searchAttributes.test.ts keeps those lists equal to this one.

export const SHIPYARD_TENANT = defineSearchAttributeKey('ShipyardTenant', SearchAttributeType.KEYWORD);
export const SHIPYARD_MOLD = defineSearchAttributeKey('ShipyardMold', SearchAttributeType.KEYWORD);
export const SHIPYARD_KIND = defineSearchAttributeKey('ShipyardKind', SearchAttributeType.KEYWORD);
type KeywordKey = typeof SHIPYARD_KIND;

/** Every custom search attribute a Shipyard workflow may carry, for registration. */
export const SEARCH_ATTRIBUTE_KEYS: readonly KeywordKey[] = [SHIPYARD_TENANT, SHIPYARD_MOLD, SHIPYARD_KIND];

/** The values of ShipyardKind: which kind of Shipyard workflow it is. */
export const WORKFLOW_KINDS = [
  'forge-run',
  'forge-reconcile',
  'worker-probe',
  'retention',
  'search-backfill',
  'search-crawl',
  'search-crawl-tick',
  'search-reindex',
  'beta-grace',
  'auto-disconnect',
  'api-key-expiry',
  'database-backup',
  'scorecards',
  'scorecards-rescore-all',
  'initiative-deadlines',
  'search-crawl-pushes',
  'integration-sync',
  'integration-sync-tick',
  'webhook-delivery',
  'platform-metrics',
] as const;
export type WorkflowKind = (typeof WORKFLOW_KINDS)[number];

/**
 * The search attributes of a workflow start (`typedSearchAttributes`). Ids must be uuids: a
 * value that is not one is refused rather than indexed in the clear.
 */
export function shipyardSearchAttributes(of: {
  kind: WorkflowKind;
  tenantId?: string;
  moldId?: string;
}): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [{ key: SHIPYARD_KIND, value: of.kind }];
  const ids: [KeywordKey, string | undefined][] = [
    [SHIPYARD_TENANT, of.tenantId],
    [SHIPYARD_MOLD, of.moldId],
  ];
  for (const [key, value] of ids) {
    if (value === undefined) continue;
    if (!UUID.test(value)) throw new Error(`search attribute ${key.name} takes a uuid, never other tenant data`);
    pairs.push({ key, value });
  }
  return pairs;
}

/** The key of a workflow of which a namespace runs one at a time (a backup, a reindex). */
export const SINGLETON_KEY = 'singleton';
/** The key of a schedule's runs; Temporal appends each run's start time to the id. */
export const SCHEDULED_KEY = 'scheduled';

/**
 * A workflow's id, one scheme for every kind (docs/temporal-ui.md): `<kind>-<key>`, its
 * ShipyardKind, then the uuid of what it is about (a run's, a tenant's), or SINGLETON_KEY or
 * SCHEDULED_KEY. Ids are shown and stored in the clear: a key is never a name.
 */
export function workflowId(kind: WorkflowKind, key: string): string {
  if (!UUID.test(key) && key !== SINGLETON_KEY && key !== SCHEDULED_KEY)
    throw new Error(`a workflow id's key is a uuid, "${SINGLETON_KEY}" or "${SCHEDULED_KEY}", never other data`);
  return `${kind}-${key}`;
}
