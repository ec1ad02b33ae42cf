import type { PoolSessionLimits } from '../db/pool';
import { durationFrom, intFrom, positiveIntFrom, uidRangeFrom, type Env } from './envValues';
import type { SandboxSettings } from './sandbox/sandbox';

// The limits that keep one tenant from taking more than its share (docs/limits.md): database
// sessions, aggregate reads, authentication, streams and connections; parsed input; the script
// sandbox. Each is read from its environment variable, with a default that works on a dev machine.

export interface ResourceLimits {
  /** Per kind of process: requests must answer quickly, background work may take longer. */
  database: { api: PoolSessionLimits; worker: PoolSessionLimits; maintenance: PoolSessionLimits };
  /** Aggregate reads (/stats, /stats/*, /entities/summary, /forge/stats). */
  aggregates: {
    /** How long a tenant's answer is served from this process's cache (writes show after it). */
    cacheTtlMs: number;
    /** Distinct aggregate queries one tenant may run at once in this process. */
    concurrentPerTenant: number;
    /** How long a read over that limit waits for a turn before a 429. */
    queueWaitMs: number;
  };
  auth: {
    /** Failed API-key validations per key prefix and client address in a window. */
    failuresPerPrefixAndClient: number;
    /** Failed validations per key prefix from every address together in a window. */
    failuresPerPrefix: number;
    failureWindowMs: number;
    /** bcrypt comparisons running at once in this process; more answer 503. */
    concurrentChecks: number;
  };
  /**
   * One tenant's requests in an API process: at most `perSecond` a second (a burst of as many)
   * and `concurrentPerTenant` at once; more wait in line up to `queueWaitMs`, then get a 429.
   */
  requests: { perSecond: number; concurrentPerTenant: number; queueWaitMs: number };
  /** Log streams (`?follow=true`) one user may hold open at once, per API process. */
  logStreamsPerUser: number;
  connections: {
    /** The whole request, headers and body, must arrive within this (server.requestTimeout). */
    requestTimeoutMs: number;
    /** The headers must arrive within this (server.headersTimeout). */
    headersTimeoutMs: number;
    /** An idle kept-alive connection is closed after this (server.keepAliveTimeout). */
    keepAliveTimeoutMs: number;
    /** A socket with no traffic either way for this long is destroyed. */
    socketIdleTimeoutMs: number;
  };
}

function poolLimitsFrom(env: Env, prefix: string, defaults: PoolSessionLimits): PoolSessionLimits {
  return {
    statementTimeoutMs: positiveIntFrom(env, `${prefix}_PG_STATEMENT_TIMEOUT_MS`, defaults.statementTimeoutMs),
    idleInTransactionTimeoutMs: positiveIntFrom(
      env,
      `${prefix}_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS`,
      defaults.idleInTransactionTimeoutMs,
    ),
    acquireTimeoutMs: positiveIntFrom(env, `${prefix}_PG_ACQUIRE_TIMEOUT_MS`, defaults.acquireTimeoutMs),
  };
}

export function resourceLimitsFrom(env: Env): ResourceLimits {
  const connections = {
    requestTimeoutMs: positiveIntFrom(env, 'SHIPYARD_HTTP_REQUEST_TIMEOUT_MS', 30_000),
    headersTimeoutMs: positiveIntFrom(env, 'SHIPYARD_HTTP_HEADERS_TIMEOUT_MS', 10_000),
    keepAliveTimeoutMs: positiveIntFrom(env, 'SHIPYARD_HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000),
    socketIdleTimeoutMs: positiveIntFrom(env, 'SHIPYARD_HTTP_SOCKET_IDLE_TIMEOUT_MS', 60_000),
  };
  // Node refuses a headers timeout longer than the request timeout.
  if (connections.headersTimeoutMs > connections.requestTimeoutMs)
    throw new Error('SHIPYARD_HTTP_HEADERS_TIMEOUT_MS must not exceed SHIPYARD_HTTP_REQUEST_TIMEOUT_MS');
  return {
    database: {
      api: poolLimitsFrom(env, 'SHIPYARD', {
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 10_000,
        acquireTimeoutMs: 2_000,
      }),
      worker: poolLimitsFrom(env, 'SHIPYARD_WORKER', {
        statementTimeoutMs: 60_000,
        idleInTransactionTimeoutMs: 60_000,
        acquireTimeoutMs: 30_000,
      }),
      maintenance: poolLimitsFrom(env, 'SHIPYARD_MAINTENANCE', {
        statementTimeoutMs: 1_800_000,
        idleInTransactionTimeoutMs: 600_000,
        acquireTimeoutMs: 60_000,
      }),
    },
    aggregates: {
      cacheTtlMs: positiveIntFrom(env, 'SHIPYARD_AGGREGATE_CACHE_TTL_MS', 30_000),
      concurrentPerTenant: positiveIntFrom(env, 'SHIPYARD_AGGREGATE_CONCURRENCY_PER_TENANT', 2),
      queueWaitMs: intFrom(env, 'SHIPYARD_AGGREGATE_QUEUE_WAIT_MS', 2_000),
    },
    auth: {
      failuresPerPrefixAndClient: positiveIntFrom(env, 'SHIPYARD_AUTH_FAILURES_PER_PREFIX_AND_CLIENT', 10),
      failuresPerPrefix: positiveIntFrom(env, 'SHIPYARD_AUTH_FAILURES_PER_PREFIX', 20),
      failureWindowMs: durationFrom(env, 'SHIPYARD_AUTH_FAILURE_WINDOW', '60s'),
      concurrentChecks: positiveIntFrom(env, 'SHIPYARD_AUTH_CONCURRENT_CHECKS', 4),
    },
    requests: {
      perSecond: positiveIntFrom(env, 'SHIPYARD_TENANT_REQUESTS_PER_SECOND', 200),
      concurrentPerTenant: positiveIntFrom(env, 'SHIPYARD_TENANT_CONCURRENT_REQUESTS', 4),
      queueWaitMs: intFrom(env, 'SHIPYARD_TENANT_REQUEST_QUEUE_WAIT_MS', 5_000),
    },
    logStreamsPerUser: positiveIntFrom(env, 'SHIPYARD_FORGE_LOG_STREAMS_PER_USER', 5),
    connections,
  };
}

/** Budgets on parsed input, checked before any work on a body or a YAML stream. */

export interface InputLimits {
  /** Levels of nesting of a JSON request body (SHIPYARD_LIMIT_JSON_DEPTH). */
  jsonDepth: number;
  /** Items of any one array of a JSON request body (SHIPYARD_LIMIT_JSON_ARRAY_ITEMS). */
  jsonArrayItems: number;
  /** Documents of one YAML stream, counted before it is parsed (SHIPYARD_MANIFEST_MAX_DOCUMENTS). */
  documents: number;
  /** Nodes of one YAML document as it expands, aliases counted at their anchor's size (SHIPYARD_MANIFEST_MAX_NODES). */
  nodes: number;
  /** Keys of one YAML map (SHIPYARD_MANIFEST_MAX_KEYS). */
  keysPerMap: number;
  /** Problems, and warnings, listed per document; the rest are counted (SHIPYARD_MANIFEST_MAX_NOTES). */
  notesPerDocument: number;
  /** How long reading one request's YAML may take on a parser thread (SHIPYARD_MANIFEST_PARSE_TIMEOUT_MS). */
  parseTimeoutMs: number;
  /** Parser threads: YAML is read off the event loop (SHIPYARD_MANIFEST_PARSE_THREADS). */
  parseThreads: number;
}

/** The limits `env` sets, each variable's default where it is unset (tests take `inputLimitsFrom({})`). */
export function inputLimitsFrom(env: Env): InputLimits {
  return {
    jsonDepth: positiveIntFrom(env, 'SHIPYARD_LIMIT_JSON_DEPTH', 64),
    jsonArrayItems: positiveIntFrom(env, 'SHIPYARD_LIMIT_JSON_ARRAY_ITEMS', 1_000),
    documents: positiveIntFrom(env, 'SHIPYARD_MANIFEST_MAX_DOCUMENTS', 500),
    nodes: positiveIntFrom(env, 'SHIPYARD_MANIFEST_MAX_NODES', 20_000),
    keysPerMap: positiveIntFrom(env, 'SHIPYARD_MANIFEST_MAX_KEYS', 1_000),
    notesPerDocument: positiveIntFrom(env, 'SHIPYARD_MANIFEST_MAX_NOTES', 50),
    parseTimeoutMs: positiveIntFrom(env, 'SHIPYARD_MANIFEST_PARSE_TIMEOUT_MS', 2_000),
    parseThreads: positiveIntFrom(env, 'SHIPYARD_MANIFEST_PARSE_THREADS', 2),
  };
}

export function sandboxFrom(env: Env): SandboxConfig {
  const memoryMb = positiveIntFrom(env, 'SHIPYARD_SCRIPT_MEMORY_MB', 512);
  const scratchMb = positiveIntFrom(env, 'SHIPYARD_SANDBOX_SCRATCH_MB', 128);
  // The processes need some of the budget too: a shell alone maps several MB.
  if (scratchMb > memoryMb - 16)
    throw new Error(
      `SHIPYARD_SANDBOX_SCRATCH_MB (${scratchMb}) must leave at least 16 MB of SHIPYARD_SCRIPT_MEMORY_MB (${memoryMb})`,
    );
  const cgroups = env.SHIPYARD_SANDBOX_CGROUPS || 'auto';
  if (cgroups !== 'auto' && cgroups !== 'off')
    throw new Error(`SHIPYARD_SANDBOX_CGROUPS must be auto or off, got "${cgroups}"`);
  return {
    uidRange: uidRangeFrom(env, 'SHIPYARD_SANDBOX_UIDS', '100000-165535'),
    cpuSeconds: intFrom(env, 'SHIPYARD_SCRIPT_CPU_SECONDS', 60),
    memoryMb,
    scratchMb,
    maxProcesses: intFrom(env, 'SHIPYARD_SCRIPT_MAX_PROCESSES', 64),
    maxFileMb: intFrom(env, 'SHIPYARD_SCRIPT_MAX_FILE_MB', 64),
    cgroups,
    logLinesPerStep: positiveIntFrom(env, 'SHIPYARD_FORGE_LOG_LINES_PER_STEP', 5_000),
    logLinesPerRun: positiveIntFrom(env, 'SHIPYARD_FORGE_LOG_LINES_PER_RUN', 20_000),
  };
}

/** config.sandbox: the sandbox's own settings (core/sandbox), and the log lines a run keeps. */
export interface SandboxConfig extends SandboxSettings {
  /** Script output lines stored per step and per run; the rest is read and dropped. */
  logLinesPerStep: number;
  logLinesPerRun: number;
}
