import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { byteSizeFrom, durationFrom, intFrom, listFrom, parseByteSize, positiveIntFrom, type Env } from './envValues';
import {
  inputLimitsFrom,
  resourceLimitsFrom,
  sandboxFrom,
  type InputLimits,
  type ResourceLimits,
  type SandboxConfig,
} from './limitsConfig';
import { IDENTITY_PROVIDERS, type IdentityProvider } from './users/types';

// Environment → typed configuration, read once. Every variable here is documented in the
// README's configuration table; defaults match what `scripts/services` provisions locally.

export interface Config {
  port: number;
  host: string;
  logLevel: string;
  /** Largest JSON request body accepted, in bytes; larger bodies get 413. */
  bodyLimitBytes: number;
  shutdownTimeoutMs: number;
  database: {
    /** The app role: no superuser, not owner, no BYPASSRLS. API and activities use it. */
    appUrl: string;
    /** The owner role: runs migrations. */
    ownerUrl: string;
    /** BYPASSRLS role, used only for cross-tenant reads (backfill). */
    systemUrl: string;
    poolMax: number;
  };
  elasticsearch: { url: string; indexPrefix: string };
  temporal: { address: string; namespace: string; uiUrl: string };
  /** Where local state lives (the dev signing key, test artefacts). */
  dataDir: string;
  auth: {
    issuer: string;
    audience: string;
    /** Verify session tokens against this JWKS URL (an OIDC provider's)… */
    jwksUrl?: string;
    /** …or this PEM public key. With neither, a local dev key under dataDir signs and verifies. */
    publicKeyPem?: string;
    /** The JWS algorithm of publicKeyPem. */
    publicKeyAlg: string;
    /** The identity provider users sign in with, as /users and /groups name it (AUTH_PROVIDER). */
    provider: IdentityProvider;
  };
  /** NODE_ENV=production: no generated dev keys are trusted; real ones must be configured. */
  production: boolean;
  /**
   * The tenant (slug or id) whose admins are platform operators: they may read any tenant's
   * workflow payloads through the codec endpoint and see Temporal UI links.
   */
  platformTenant: string;
  /**
   * Encryption keys for workflow payloads and secrets at rest, `keyId:base64(32 bytes)` entries;
   * the first encrypts, every one decrypts (rotation). Unset: a dev key under dataDir.
   */
  encryptionKeys?: string;
  /**
   * Where outbound calls made for a tenant may go besides public addresses: hosts, addresses
   * or CIDR ranges, each optionally with a port (parsed by the egress guard).
   */
  egressAllow: string[];
  /** Limits of the sandbox forge scripts run in, and of the log lines a run keeps. */
  sandbox: SandboxConfig;
  /** Caps on an api-call's parts once its parameters are filled in. */
  forgeTemplates: { urlBytes: number; headersBytes: number; bodyBytes: number };
  forge: {
    /** Log streams (`?follow=true`) one tenant may hold open at once, per API process. */
    logStreamsPerTenant: number;
    // Fair sharing of the forge pool and runs that never get stuck (docs/limits.md, "Forge runs").
    // The first three are defaults a tenant's row in forge_tenant_limits overrides.
    /** Runs of one tenant that may run at once; more wait `pending`, in order. */
    runningRunsPerTenant: number;
    /** Actions of one tenant that may execute at once; a run that finds none free waits in its workflow. */
    actionSlotsPerTenant: number;
    /** Runs one tenant may start per minute; more answer 429 with Retry-After. */
    runStartsPerMinute: number;
    /** A step's time across all its attempts (Temporal's schedule-to-close), in seconds. */
    stepBudgetSeconds: number;
    /** Bytes of a run's parameters (as JSON); more answer 413. */
    parametersMaxBytes: number;
    /** How often a run waiting for a slot looks again when no slot-freed signal came (seconds). */
    slotRecheckSeconds: number;
    /** How often the forge pool reconciles runs whose workflow Temporal closed on its own. */
    reconcileIntervalMs: number;
  };
  /** How long pruned data is kept, pruned by the platform pool's `shipyard-retention` schedule. */
  retention: {
    /** Forge run log lines (run_logs) older than this are deleted. */
    runLogsDays: number;
    /** Audit entries (audit_log) older than this are deleted. */
    auditDays: number;
    /** Outbound webhook events (and their deliveries) dispatched longer ago than this are deleted, once none is pending. */
    webhookDays: number;
    /** How often the schedule prunes. */
    intervalMs: number;
  };
  /** The documentation crawler (README, Search). */
  crawl: {
    /** How long after a successful crawl a repository is due again. */
    intervalMs: number;
    /** How long after a failed crawl (the host down, a bad token) it is due again. */
    retryMs: number;
    /** How often the fallback schedule crawls every tenant's due repositories. */
    tickMs: number;
  };
  /** What operators scrape (README, Operators). */
  metrics: {
    /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
    token?: string;
    /** When set, /metrics is served on this port (a listener of its own) and not on `port`. */
    port?: number;
    /** The separate listener's address; only with `port`. */
    host: string;
    /** Where each worker process serves the Temporal SDK's metrics (`ip:port`); undefined: off. */
    workerAddress?: string;
  };
  /** Resource limits: database, auth, streams, connections (ResourceLimits). */
  limits: ResourceLimits;
  /** Budgets on parsed input (docs/limits.md, "Parsed input"). */
  inputLimits: InputLimits;
  agents: AgentConfig;
  // Licensing: docs/licensing.md.
  license: {
    /** PEM (SPKI) Ed25519 key license keys are verified with; unset: a dev key pair under dataDir. */
    publicKeyPem?: string;
    /** A Beta key's free period from its issue date, in calendar months. */
    betaPeriodMonths: number;
    /** The read-only window after the Beta period, before auto-disconnect. */
    betaGraceMs: number;
    /** How often the auto-disconnect schedule runs. */
    autoDisconnectIntervalMs: number;
    /** How long a process trusts its knowledge of whether a tenant is read-only (writes only). */
    readOnlyCacheMs: number;
  };
  operations: OperationsConfig;
  admin: AdminConfig;
  backups: BackupConfig;
  scorecards: ScorecardsConfig;
  receiver: ReceiverConfig;
  integrations: IntegrationsConfig;
  webhooks: WebhooksConfig;
  commitHistory: CommitHistoryConfig;
  dora: DoraConfig;
  platformMetrics: PlatformMetricsConfig;
}

// Operations and GitOps
/** Cluster data views and the GitOps push (docs/operations-views.md, docs/limits.md). */
export interface OperationsConfig {
  /** The most resources one POST /k8s/gitops/push may hold; more is a 413. */
  gitopsMaxResourcesPerPush: number;
  /** How long a workload must have been known, or silent, before it counts as a zombie (ms). */
  zombieAgeMs: number;
}

function operationsFrom(env: Env): OperationsConfig {
  return {
    gitopsMaxResourcesPerPush: positiveIntFrom(env, 'SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH', 5000),
    zombieAgeMs: durationFrom(env, 'SHIPYARD_OPERATIONS_ZOMBIE_AGE', '7d'),
  };
}

// Platform administration: docs/administration.md, docs/notifications.md
export interface AdminConfig {
  /** Bytes of a tenant's settings object as JSON; more answer 413. */
  settingsMaxBytes: number;
  /** How long a process trusts a tenant's policies it read (a PUT in this process drops them at once). */
  policyCacheMs: number;
  /** How often the schedule looks for API keys about to expire. */
  apiKeyExpiryScanIntervalMs: number;
  /** How far ahead of its expiry a key's creator is notified, once. */
  apiKeyExpiryNoticeMs: number;
  /** Open notification streams (GET /notifications?follow=true) one user may hold per API process. */
  notificationStreamsPerUser: number;
}

function adminFrom(env: Env): AdminConfig {
  return {
    settingsMaxBytes: byteSizeFrom(env, 'SHIPYARD_SETTINGS_MAX_BYTES', '64kb'),
    policyCacheMs: durationFrom(env, 'SHIPYARD_POLICY_CACHE', '30s'),
    apiKeyExpiryScanIntervalMs: durationFrom(env, 'SHIPYARD_API_KEY_EXPIRY_SCAN_INTERVAL', '1d'),
    apiKeyExpiryNoticeMs: durationFrom(env, 'SHIPYARD_API_KEY_EXPIRY_NOTICE', '7d'),
    notificationStreamsPerUser: positiveIntFrom(env, 'SHIPYARD_NOTIFICATION_STREAMS_PER_USER', 3),
  };
}
// Database backups
/** POST /database/backup: pg_dump on a platform worker (docs/operations.md, docs/limits.md). */
export interface BackupConfig {
  /** Where dumps are written (SHIPYARD_BACKUP_DIR, default `<SHIPYARD_DATA>/backups`). */
  dir: string;
  /**
   * The pg_dump to run (SHIPYARD_PG_DUMP). Unset: the newest of Debian's
   * /usr/lib/postgresql/<major>/bin/pg_dump, else pg_dump on PATH. It must be as new as the server.
   */
  pgDump?: string;
  /**
   * What the dump connects as (SHIPYARD_BACKUP_DATABASE_URL): a role that bypasses row-level
   * security, or the dump would be empty. Default: the system role's (DATABASE_SYSTEM_URL).
   */
  databaseUrl: string;
  /** How long one dump may run before it is failed (SHIPYARD_BACKUP_TIMEOUT). */
  timeoutMs: number;
}

function backupsFrom(env: Env, dataDir: string, systemUrl: string): BackupConfig {
  return {
    dir: path.resolve(env.SHIPYARD_BACKUP_DIR || path.join(dataDir, 'backups')),
    pgDump: env.SHIPYARD_PG_DUMP || undefined,
    databaseUrl: env.SHIPYARD_BACKUP_DATABASE_URL || systemUrl,
    timeoutMs: durationFrom(env, 'SHIPYARD_BACKUP_TIMEOUT', '6h'),
  };
}
// Scorecards
/** Scorecards and initiatives (docs/scorecards.md, docs/limits.md). */
export interface ScorecardsConfig {
  /** Entities one activity scores (the batch a tenant's workflow takes at a time). */
  batchSize: number;
  /** Transactions a full pass's batch is split over, side by side. */
  passConcurrency: number;
  /** Per tenant: one more is a 400 naming the limit. */
  maxCategories: number;
  maxRules: number;
  maxInitiatives: number;
  /** How long a tenant's scoring workflow waits for more work before it ends (a new change starts it again). */
  idleMs: number;
  /** How often the platform worker looks for queued work whose notification it missed. */
  drainPollMs: number;
  /** How often every tenant is scored again (time-based checks: workloads, crawled docs). */
  rescoreIntervalMs: number;
  /** How often initiatives past their target date are checked for governance actions. */
  initiativeIntervalMs: number;
}

function scorecardsFrom(env: Env): ScorecardsConfig {
  return {
    batchSize: positiveIntFrom(env, 'SHIPYARD_SCORECARD_BATCH_SIZE', 1000),
    passConcurrency: positiveIntFrom(env, 'SHIPYARD_SCORECARD_PASS_CONCURRENCY', 2),
    maxCategories: positiveIntFrom(env, 'SHIPYARD_SCORECARD_MAX_CATEGORIES', 50),
    maxRules: positiveIntFrom(env, 'SHIPYARD_SCORECARD_MAX_RULES', 200),
    maxInitiatives: positiveIntFrom(env, 'SHIPYARD_SCORECARD_MAX_INITIATIVES', 100),
    idleMs: durationFrom(env, 'SHIPYARD_SCORECARD_IDLE', '1m'),
    drainPollMs: durationFrom(env, 'SHIPYARD_SCORECARD_DRAIN_POLL', '5s'),
    rescoreIntervalMs: durationFrom(env, 'SHIPYARD_SCORECARD_RESCORE_INTERVAL', '1d'),
    initiativeIntervalMs: durationFrom(env, 'SHIPYARD_SCORECARD_INITIATIVE_INTERVAL', '1d'),
  };
}
// Integration sync: docs/integrations.md, docs/limits.md
export interface IntegrationsConfig {
  /** How often every integration in use is synced (the platform pool's schedule). */
  syncIntervalMs: number;
  /** Syncs of one tenant a platform worker runs at once; more wait their turn (retried). */
  syncSlotsPerTenant: number;
  /** How far back an incident-tool-a sync asks for incidents (changed since then). */
  incidentLookbackMs: number;
}

function integrationsFrom(env: Env): IntegrationsConfig {
  return {
    syncIntervalMs: durationFrom(env, 'SHIPYARD_INTEGRATION_SYNC_INTERVAL', '15m'),
    syncSlotsPerTenant: positiveIntFrom(env, 'SHIPYARD_INTEGRATION_SYNC_SLOTS_PER_TENANT', 2),
    incidentLookbackMs: durationFrom(env, 'SHIPYARD_INCIDENT_LOOKBACK', '90d'),
  };
}

// DORA metrics: docs/insights.md, DORA metrics, docs/limits.md.
export interface DoraConfig {
  /** A deployment followed by an incident on its entity within this long is a failed change. */
  failureWindowMs: number;
}

function doraFrom(env: Env): DoraConfig {
  return { failureWindowMs: durationFrom(env, 'SHIPYARD_DORA_FAILURE_WINDOW', '24h') };
}

// The source-host receiver: docs/source-host-receiver.md, docs/limits.md.
/** POST /integrations/vcs-host-a/webhook. */
export interface ReceiverConfig {
  /** Largest delivery body accepted, in bytes; larger ones get 413. */
  bodyLimitBytes: number;
  /** How long a delivery id is remembered (to answer a redelivery `duplicate`), in days. */
  deliveryRetentionDays: number;
}

function receiverFrom(env: Env): ReceiverConfig {
  return {
    bodyLimitBytes: byteSizeFrom(env, 'SHIPYARD_RECEIVER_BODY_LIMIT', '1mb'),
    deliveryRetentionDays: positiveIntFrom(env, 'SHIPYARD_RECEIVER_DELIVERY_RETENTION_DAYS', 14),
  };
}
// Outbound webhooks: docs/webhooks.md, docs/limits.md
export interface WebhooksConfig {
  /** How long one delivery attempt may take (connect, send, answer) before it counts as a timeout. */
  attemptTimeoutMs: number;
  /** The first retry's delay; later ones double, with jitter, up to retryMaxDelayMs. */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** No retry starts later than this after a delivery's first attempt. */
  retryWindowMs: number;
  /**
   * Deliveries under way at once (started, not yet delivered or failed, retries included) per
   * webhook and per tenant; more wait, in order, to be started by the dispatcher.
   */
  inFlightPerWebhook: number;
  inFlightPerTenant: number;
  /** How often the dispatcher looks for events whose notification it missed. */
  dispatchPollMs: number;
}

function webhooksFrom(env: Env): WebhooksConfig {
  return {
    attemptTimeoutMs: durationFrom(env, 'SHIPYARD_WEBHOOK_ATTEMPT_TIMEOUT', '10s'),
    retryBaseDelayMs: durationFrom(env, 'SHIPYARD_WEBHOOK_RETRY_BASE_DELAY', '10s'),
    retryMaxDelayMs: durationFrom(env, 'SHIPYARD_WEBHOOK_RETRY_MAX_DELAY', '1h'),
    retryWindowMs: durationFrom(env, 'SHIPYARD_WEBHOOK_RETRY_WINDOW', '24h'),
    inFlightPerWebhook: positiveIntFrom(env, 'SHIPYARD_WEBHOOK_IN_FLIGHT_PER_WEBHOOK', 4),
    inFlightPerTenant: positiveIntFrom(env, 'SHIPYARD_WEBHOOK_IN_FLIGHT_PER_TENANT', 16),
    dispatchPollMs: durationFrom(env, 'SHIPYARD_WEBHOOK_DISPATCH_POLL', '5s'),
  };
}

// Commit history and bus factor: docs/insights.md, Bus factor, docs/limits.md
export interface CommitHistoryConfig {
  /** Commits older than this many days are neither fetched nor kept. */
  days: number;
  /** Commits whose details (lines changed) one crawl of a repository fetches; the rest wait for the next. */
  fetchPerCrawl: number;
  /** Commits one crawl lists from the host (100 per request); past it, the oldest of the gap are skipped. */
  listPerCrawl: number;
}

function commitHistoryFrom(env: Env): CommitHistoryConfig {
  return {
    days: positiveIntFrom(env, 'SHIPYARD_COMMIT_HISTORY_DAYS', 365),
    fetchPerCrawl: positiveIntFrom(env, 'SHIPYARD_COMMIT_FETCH_PER_CRAWL', 300),
    listPerCrawl: positiveIntFrom(env, 'SHIPYARD_COMMIT_LIST_PER_CRAWL', 3000),
  };
}

function portFrom(env: Env, name: string): number | undefined {
  if (!env[name]) return undefined;
  const port = intFrom(env, name, 0);
  if (port < 1 || port > 65_535) throw new Error(`${name} must be a port (1-65535), got "${env[name]}"`);
  return port;
}

/**
 * `ip:port` or `[ipv6]:port`, as the Temporal SDK binds it (an address, not a host name; a
 * fixed port, so it can be scraped). Empty disables; unset takes the fallback.
 */
function bindAddressFrom(env: Env, name: string, fallback: string): string | undefined {
  const raw = (env[name] ?? fallback).trim();
  if (raw === '') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  const ip = match?.[1] ?? match?.[2] ?? '';
  const port = Number(match?.[3]);
  if (!match || isIP(ip) !== (match[1] ? 6 : 4) || !(port >= 1 && port <= 65_535))
    throw new Error(`${name} must be ip:port (e.g. 127.0.0.1:9464, [::1]:9464) or empty to disable, got "${raw}"`);
  return raw;
}

/** Sent in a header and compared whole: printable, no spaces, long enough not to be guessed. */
function metricsTokenFrom(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(raw))
    throw new Error(`${name} must be at least 16 printable characters without spaces`);
  return raw;
}

function metricsFrom(env: Env, mainPort: number): Config['metrics'] {
  const port = portFrom(env, 'SHIPYARD_METRICS_PORT');
  if (port !== undefined && port === mainPort)
    throw new Error(`SHIPYARD_METRICS_PORT must differ from PORT (${mainPort}); unset it to serve /metrics there`);
  if (env.SHIPYARD_METRICS_HOST && port === undefined)
    throw new Error('SHIPYARD_METRICS_HOST applies only with SHIPYARD_METRICS_PORT');
  return {
    token: metricsTokenFrom(env, 'SHIPYARD_METRICS_TOKEN'),
    port,
    host: env.SHIPYARD_METRICS_HOST || '127.0.0.1',
    workerAddress: bindAddressFrom(env, 'SHIPYARD_WORKER_METRICS_ADDRESS', '127.0.0.1:9464'),
  };
}

function identityProviderFrom(env: Env, name: string, fallback: IdentityProvider): IdentityProvider {
  const raw = env[name] || fallback;
  if (!(IDENTITY_PROVIDERS as readonly string[]).includes(raw))
    throw new Error(`${name} must be one of ${IDENTITY_PROVIDERS.join(', ')}, got "${raw}"`);
  return raw as IdentityProvider;
}

/**
 * The project root: the nearest folder above this file with a package.json (the clone, or the
 * image's /app when running from dist/). Defaults are resolved from it, not from the working
 * directory, so the CLI run from anywhere shares the API's data folder, as scripts/lib/common.sh
 * does with $ROOT/.data.
 */
function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

// Cluster agents: docs/agents.md and docs/limits.md, "Cluster agents".
export interface AgentConfig {
  /** An agent whose last heartbeat is at most this old (ms) is `active`. */
  activeWithinMs: number;
  /** Older than active but at most this old (ms): `stale`; older, or never: `offline`. */
  staleWithinMs: number;
  /** Workloads one push may carry; more answer 413. */
  pushMaxWorkloads: number;
  /** Flows one network-flow push may carry; more answer 413. */
  pushMaxFlows: number;
  /** Largest body of an agent push (it replaces BODY_LIMIT on the push routes). */
  pushBodyLimitBytes: number;
}

function agentsFrom(env: Env): AgentConfig {
  const activeWithinMs = durationFrom(env, 'SHIPYARD_AGENT_ACTIVE_WITHIN', '90s');
  const staleWithinMs = durationFrom(env, 'SHIPYARD_AGENT_STALE_WITHIN', '10m');
  if (staleWithinMs < activeWithinMs)
    throw new Error('SHIPYARD_AGENT_STALE_WITHIN must be at least SHIPYARD_AGENT_ACTIVE_WITHIN');
  return {
    activeWithinMs,
    staleWithinMs,
    pushMaxWorkloads: positiveIntFrom(env, 'SHIPYARD_AGENT_PUSH_MAX_WORKLOADS', 5_000),
    pushMaxFlows: positiveIntFrom(env, 'SHIPYARD_AGENT_PUSH_MAX_FLOWS', 5_000),
    pushBodyLimitBytes: byteSizeFrom(env, 'SHIPYARD_AGENT_PUSH_BODY_LIMIT', '16mb'),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const pgHost = env.SHIPYARD_PG_HOST ?? '127.0.0.1';
  const pgPort = intFrom(env, 'SHIPYARD_PG_PORT', 5432);
  const pgDatabase = env.SHIPYARD_PG_DATABASE ?? 'shipyard';
  const localUrl = (role: string) => `postgres://${role}:${role}@${pgHost}:${pgPort}/${pgDatabase}`;
  const port = intFrom(env, 'PORT', 8080);
  const systemUrl = env.DATABASE_SYSTEM_URL ?? localUrl('shipyard_system');
  const dataDir = path.resolve(env.SHIPYARD_DATA ?? path.join(projectRoot(), '.data'));
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    logLevel: env.LOG_LEVEL ?? 'info',
    bodyLimitBytes: parseByteSize(env.BODY_LIMIT ?? '1mb'),
    shutdownTimeoutMs: intFrom(env, 'SHUTDOWN_TIMEOUT_MS', 10_000),
    database: {
      appUrl: env.DATABASE_URL ?? localUrl('shipyard_app'),
      ownerUrl: env.DATABASE_OWNER_URL ?? localUrl('shipyard_owner'),
      systemUrl,
      poolMax: intFrom(env, 'DATABASE_POOL_MAX', 10),
    },
    elasticsearch: {
      url: env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200',
      indexPrefix: env.ES_INDEX_PREFIX ?? 'shipyard',
    },
    temporal: {
      address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      namespace: env.TEMPORAL_NAMESPACE ?? 'default',
      uiUrl: env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233',
    },
    dataDir,
    auth: {
      issuer: env.AUTH_ISSUER ?? 'shipyard-dev',
      audience: env.AUTH_AUDIENCE ?? 'shipyard',
      jwksUrl: env.AUTH_JWKS_URL || undefined,
      publicKeyPem: env.AUTH_PUBLIC_KEY || undefined,
      publicKeyAlg: env.AUTH_PUBLIC_KEY_ALG ?? 'RS256',
      provider: identityProviderFrom(env, 'AUTH_PROVIDER', 'idp-a'),
    },
    production: env.NODE_ENV === 'production',
    platformTenant: env.SHIPYARD_PLATFORM_TENANT || 'platform',
    encryptionKeys: env.SHIPYARD_ENCRYPTION_KEYS || undefined,
    egressAllow: listFrom(env.SHIPYARD_EGRESS_ALLOW),
    sandbox: sandboxFrom(env),
    forgeTemplates: {
      urlBytes: byteSizeFrom(env, 'SHIPYARD_FORGE_TEMPLATE_URL_BYTES', '8kb'),
      headersBytes: byteSizeFrom(env, 'SHIPYARD_FORGE_TEMPLATE_HEADERS_BYTES', '16kb'),
      bodyBytes: byteSizeFrom(env, 'SHIPYARD_FORGE_TEMPLATE_BODY_BYTES', '1mb'),
    },
    forge: {
      logStreamsPerTenant: positiveIntFrom(env, 'SHIPYARD_FORGE_LOG_STREAMS_PER_TENANT', 20),
      // Fair sharing and reconciliation of forge runs.
      runningRunsPerTenant: positiveIntFrom(env, 'SHIPYARD_FORGE_RUNNING_RUNS_PER_TENANT', 10),
      actionSlotsPerTenant: positiveIntFrom(env, 'SHIPYARD_FORGE_ACTION_SLOTS_PER_TENANT', 5),
      runStartsPerMinute: positiveIntFrom(env, 'SHIPYARD_FORGE_RUN_STARTS_PER_MINUTE', 30),
      stepBudgetSeconds: durationFrom(env, 'SHIPYARD_FORGE_STEP_BUDGET', '30m') / 1000,
      parametersMaxBytes: byteSizeFrom(env, 'SHIPYARD_FORGE_PARAMETERS_MAX_BYTES', '64kb'),
      slotRecheckSeconds: durationFrom(env, 'SHIPYARD_FORGE_SLOT_RECHECK', '30s') / 1000,
      reconcileIntervalMs: durationFrom(env, 'SHIPYARD_FORGE_RECONCILE_INTERVAL', '5m'),
    },
    retention: {
      runLogsDays: positiveIntFrom(env, 'SHIPYARD_RETENTION_RUN_LOGS_DAYS', 30),
      auditDays: positiveIntFrom(env, 'SHIPYARD_RETENTION_AUDIT_DAYS', 365),
      webhookDays: positiveIntFrom(env, 'SHIPYARD_RETENTION_WEBHOOK_DAYS', 30),
      intervalMs: durationFrom(env, 'SHIPYARD_RETENTION_INTERVAL', '1h'),
    },
    crawl: {
      intervalMs: durationFrom(env, 'SHIPYARD_CRAWL_INTERVAL', '24h'),
      retryMs: durationFrom(env, 'SHIPYARD_CRAWL_RETRY', '1h'),
      tickMs: durationFrom(env, 'SHIPYARD_CRAWL_TICK', '1h'),
    },
    metrics: metricsFrom(env, port),
    limits: resourceLimitsFrom(env),
    inputLimits: inputLimitsFrom(env),
    agents: agentsFrom(env),
    // Licensing: docs/licensing.md.
    license: {
      publicKeyPem: env.SHIPYARD_LICENSE_PUBLIC_KEY || undefined,
      betaPeriodMonths: positiveIntFrom(env, 'SHIPYARD_BETA_PERIOD_MONTHS', 6),
      betaGraceMs: durationFrom(env, 'SHIPYARD_BETA_GRACE', '30d'),
      autoDisconnectIntervalMs: durationFrom(env, 'SHIPYARD_AUTO_DISCONNECT_INTERVAL', '1d'),
      readOnlyCacheMs: durationFrom(env, 'SHIPYARD_LICENSE_READ_ONLY_CACHE', '10s'),
    },
    operations: operationsFrom(env),
    admin: adminFrom(env),
    backups: backupsFrom(env, dataDir, systemUrl),
    scorecards: scorecardsFrom(env),
    receiver: receiverFrom(env),
    integrations: integrationsFrom(env),
    webhooks: webhooksFrom(env),
    commitHistory: commitHistoryFrom(env),
    dora: doraFrom(env),
    platformMetrics: platformMetricsFrom(env),
  };
}

// Platform metrics
/** GET /insights/platform-metrics and its nightly rollup (docs/insights.md, Platform metrics, docs/limits.md). */
export interface PlatformMetricsConfig {
  /** How often the platform pool's schedule rolls up the closed days (every 24 h: at 00:00 UTC). */
  rollupIntervalMs: number;
  /** How many days back a rollup computes the days the schedule missed. */
  backfillDays: number;
  /** How often each API process writes the calls and callers it counted. */
  flushIntervalMs: number;
  /** The most days one read may cover; more is a 400. */
  maxRangeDays: number;
}

function platformMetricsFrom(env: Env): PlatformMetricsConfig {
  return {
    rollupIntervalMs: durationFrom(env, 'SHIPYARD_PLATFORM_METRICS_ROLLUP_INTERVAL', '1d'),
    backfillDays: positiveIntFrom(env, 'SHIPYARD_PLATFORM_METRICS_BACKFILL_DAYS', 30),
    flushIntervalMs: durationFrom(env, 'SHIPYARD_PLATFORM_METRICS_FLUSH_INTERVAL', '10s'),
    maxRangeDays: positiveIntFrom(env, 'SHIPYARD_PLATFORM_METRICS_MAX_RANGE_DAYS', 366),
  };
}
