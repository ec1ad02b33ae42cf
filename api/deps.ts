import type { KeyObject } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import {
  Client as TemporalClient,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
} from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { createKeyring, type Keyring } from '../core/crypto/keyring';
import { createManifestReader, type ManifestReader } from '../core/manifests/readPool';
import { EncryptionCodec, encryptedDataConverter } from '../core/crypto/payloadCodec';
import { ChangeListener } from '../db/notifications';
import { createPool } from '../db/pool';
import { withTenant } from '../db/tenancy';
import { createApiKeyCache, type ApiKeyCache } from './auth/apiKeyCache';
import { createSessionPrincipalCache } from './auth/sessionPrincipalCache';
import { Authenticator } from './auth/authenticate';
import { createSessionVerifier } from '../core/auth/sessionTokens';
import { licensePublicKey } from '../core/license/keys';
import { ReadOnlyTenants } from '../core/license/readOnlyTenants';
import { PolicyReader } from '../core/policies/reader';
import { readOnlyFacts } from '../core/license/store';
import type { Config } from '../core/config';
import { createTeamsCache, type TeamsCache } from './teams/cache';
import { AggregateReads } from './http/aggregateReads';
import { KeyedGate } from '../core/keyedGate';
import { RequestPacer } from './http/requestPacer';
import { createSearchEngine, type SearchEngine } from '../search/client';
import { PlatformActivityRecorder } from '../core/insights/platformMetricsRecorder';

/** The long-lived clients a request may use, created once per process. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  /** The app role: every request's tenant transaction. */
  db: Knex;
  /** The system role (BYPASSRLS, read-only): token lookups before the tenant is known, backfill. */
  system: Knex;
  /** Elasticsearch and our index prefix; every search goes through search/queries.ts. */
  search: SearchEngine;
  /** Its data converter encrypts every payload (core/crypto/payloadCodec.ts). */
  temporal: TemporalClient;
  /** Seals and opens integration secrets; the payload codec's keys. */
  keyring: Keyring;
  /** The same codec the Temporal client uses, for the operators' codec endpoint. */
  payloadCodec: EncryptionCodec;
  authenticator: Authenticator;
  /** Postgres notifications that keep this process's caches in step with the others. */
  changes: ChangeListener;
  apiKeyCache: ApiKeyCache;
  /** GET /teams per tenant; replaceable (a test gives it its own clock). */
  teamsCache: TeamsCache;
  /** Statistics reads: cached, shared and bounded per tenant. */
  aggregates: AggregateReads;
  /** Each tenant's requests in this process: paced, and bounded in progress (limits.requests). */
  tenantPace: RequestPacer;
  tenantRequests: KeyedGate;
  /** The threads that read manifests' YAML, off the event loop. */
  manifests: ManifestReader;
  /** The key license keys are verified with (the configured one, or the dev key outside production). */
  licensePublicKey: KeyObject;
  /** Which tenants are read-only (Beta ended), for the router's guard on writes. */
  readOnlyTenants: ReadOnlyTenants;
  /** Each tenant's platform policies, cached for the writes they govern (core/policies). */
  policies: PolicyReader;
  /**
   * Aborted when the process begins to stop: long-lived responses (followed run logs) end then,
   * rather than hold the server open until SHUTDOWN_TIMEOUT_MS cuts them.
   */
  stopping: AbortController;
  /** The calls and callers this process counts for platform metrics, written every few seconds. */
  platformActivity: PlatformActivityRecorder;
}

/**
 * Builds the clients. The database pools and the Temporal connection open lazily, so the API
 * starts (and /system reports the outage) even when a service is down.
 */
export async function createDeps(config: Config, logger: Logger): Promise<AppDeps> {
  // First: a missing or malformed key stops the start before any connection opens.
  const keyring = createKeyring(config);
  const payloadCodec = new EncryptionCodec(keyring);
  const connection = Connection.lazy({
    address: config.temporal.address,
    // A request should fail fast when Temporal is down: 4 attempts settle in about a second,
    // inside the health check's deadline. (The SDK's default of 10 keeps a retry timer alive
    // for ~20 s that ignores cancellation and fails once the connection is closed.)
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 4 }))],
  });
  const limits = config.limits.database.api;
  const db = createPool(config.database.appUrl, config.database.poolMax, { limits, logger });
  const system = createPool(config.database.systemUrl, Math.max(2, Math.ceil(config.database.poolMax / 2)), {
    limits,
    logger,
  });
  const changes = new ChangeListener(config.database.appUrl, logger);
  const apiKeyCache = createApiKeyCache(changes);
  const teamsCache = createTeamsCache(changes);
  const sessionPrincipals = createSessionPrincipalCache(changes);
  await changes.start();
  const verifySession = await createSessionVerifier(config);
  const licenseKey = licensePublicKey(config);
  const authenticator = new Authenticator({
    db,
    system,
    verifySession,
    apiKeyCache,
    sessionPrincipals,
    logger,
    platformTenant: config.platformTenant,
    limits: config.limits.auth,
  });
  // The platform tenant exists from the first start, so the first operator's token works at once.
  await authenticator
    .platformTenantId()
    .catch((err: unknown) =>
      logger.warn({ err }, 'could not create the platform tenant yet; the first operator request will'),
    );
  const stopping = new AbortController();
  // One listener per open log stream: many is normal, not a leak.
  setMaxListeners(0, stopping.signal);
  const platformActivity = new PlatformActivityRecorder(db, logger);
  platformActivity.start(config.platformMetrics.flushIntervalMs);
  return {
    config,
    logger,
    db,
    system,
    search: createSearchEngine(config),
    temporal: new TemporalClient({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: encryptedDataConverter(payloadCodec),
    }),
    keyring,
    payloadCodec,
    authenticator,
    changes,
    apiKeyCache,
    teamsCache,
    aggregates: new AggregateReads(config.limits.aggregates),
    tenantPace: new RequestPacer(config.limits.requests.perSecond, config.limits.requests.queueWaitMs),
    tenantRequests: new KeyedGate(config.limits.requests.concurrentPerTenant),
    manifests: createManifestReader(config.inputLimits),
    licensePublicKey: licenseKey,
    readOnlyTenants: new ReadOnlyTenants(config.license.readOnlyCacheMs, async (tenantId) => {
      const facts = await withTenant(db, tenantId, readOnlyFacts);
      return facts ?? { edition: 'free', beta_ends_at: null };
    }),
    policies: new PolicyReader(config.admin.policyCacheMs),
    stopping,
    platformActivity,
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  deps.stopping.abort();
  await deps.changes.close();
  await deps.platformActivity.stop();
  await Promise.allSettled([
    deps.db.destroy(),
    deps.system.destroy(),
    deps.search.client.close(),
    deps.temporal.connection.close(),
    deps.manifests.close(),
  ]);
}
