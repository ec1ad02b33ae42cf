import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config';
import { parseByteSize, parseDuration } from '../../core/envValues';

test('defaults point every client at the locally provisioned services', () => {
  const config = loadConfig({});
  expect(config.port).toBe(8080);
  expect(config.database.appUrl).toBe('postgres://shipyard_app:shipyard_app@127.0.0.1:5432/shipyard');
  expect(config.database.ownerUrl).toContain('shipyard_owner@');
  expect(config.database.systemUrl).toContain('shipyard_system@');
  expect(config.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://127.0.0.1:8233' });
  expect(config.bodyLimitBytes).toBe(1024 * 1024);
});

test("the data folder defaults to the project root's .data wherever the process runs, and SHIPYARD_DATA overrides it", () => {
  const root = path.join(__dirname, '..', '..');
  const cwd = process.cwd();
  try {
    process.chdir(tmpdir());
    expect(loadConfig({}).dataDir).toBe(path.join(root, '.data'));
    expect(loadConfig({ SHIPYARD_DATA: 'elsewhere' }).dataDir).toBe(path.resolve('elsewhere'));
  } finally {
    process.chdir(cwd);
  }
});

test('the local database coordinates move all three default URLs together; explicit URLs win', () => {
  const config = loadConfig({
    SHIPYARD_PG_PORT: '5433',
    SHIPYARD_PG_DATABASE: 'shipyard_test',
    DATABASE_URL: 'postgres://x/y',
  });
  expect(config.database.appUrl).toBe('postgres://x/y');
  expect(config.database.ownerUrl).toBe('postgres://shipyard_owner:shipyard_owner@127.0.0.1:5433/shipyard_test');
});

test('byte sizes accept plain bytes, kb and mb; anything else is refused', () => {
  expect(parseByteSize('65536')).toBe(65536);
  expect(parseByteSize('64kb')).toBe(65536);
  expect(parseByteSize('2MB')).toBe(2 * 1024 * 1024);
  expect(() => parseByteSize('lots')).toThrow(/not a byte size/);
});

test('a malformed integer setting fails loudly at start-up instead of defaulting', () => {
  expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be an integer from 0 to 2147483647/);
});

test("an integer setting past PostgreSQL's integer is refused at start-up, not failed on in a request", () => {
  expect(() => loadConfig({ SHIPYARD_FORGE_RUN_STARTS_PER_MINUTE: '9007199254740991' })).toThrow(
    /SHIPYARD_FORGE_RUN_STARTS_PER_MINUTE must be an integer from 0 to 2147483647/,
  );
  expect(loadConfig({ SHIPYARD_FORGE_RUN_STARTS_PER_MINUTE: '2147483647' }).forge.runStartsPerMinute).toBe(2147483647);
});

test('retention keeps run logs 30 days, audit entries 365 and webhook events 30, pruned hourly, unless configured otherwise', () => {
  expect(loadConfig({}).retention).toEqual({ runLogsDays: 30, auditDays: 365, webhookDays: 30, intervalMs: 3_600_000 });
  expect(
    loadConfig({
      SHIPYARD_RETENTION_RUN_LOGS_DAYS: '7',
      SHIPYARD_RETENTION_AUDIT_DAYS: '90',
      SHIPYARD_RETENTION_WEBHOOK_DAYS: '3',
      SHIPYARD_RETENTION_INTERVAL: '15m',
    }).retention,
  ).toEqual({ runLogsDays: 7, auditDays: 90, webhookDays: 3, intervalMs: 15 * 60_000 });
});

test('a retention of zero days, a non-number or a malformed interval stops the start, naming the variable', () => {
  expect(() => loadConfig({ SHIPYARD_RETENTION_RUN_LOGS_DAYS: '0' })).toThrow(
    /SHIPYARD_RETENTION_RUN_LOGS_DAYS must be at least 1/,
  );
  expect(() => loadConfig({ SHIPYARD_RETENTION_AUDIT_DAYS: 'a year' })).toThrow(
    /SHIPYARD_RETENTION_AUDIT_DAYS must be an integer from 0/,
  );
  expect(() => loadConfig({ SHIPYARD_RETENTION_INTERVAL: 'hourly' })).toThrow(
    /SHIPYARD_RETENTION_INTERVAL: not a duration/,
  );
  expect(() => loadConfig({ SHIPYARD_RETENTION_INTERVAL: '0s' })).toThrow(/SHIPYARD_RETENTION_INTERVAL/);
});

test('durations accept seconds, minutes, hours and days', () => {
  expect(parseDuration('90s')).toBe(90_000);
  expect(parseDuration('1H')).toBe(3_600_000);
  expect(parseDuration('2d')).toBe(2 * 86_400_000);
  expect(() => parseDuration('1w')).toThrow(/not a duration/);
});

test('metrics default to /metrics on the main port without a token, and worker metrics on 127.0.0.1:9464', () => {
  expect(loadConfig({}).metrics).toEqual({
    token: undefined,
    port: undefined,
    host: '127.0.0.1',
    workerAddress: '127.0.0.1:9464',
  });
});

test('metrics settings: a token, a separate port and host, an IPv6 worker address, or none (empty disables)', () => {
  const token = 'scrape-token-0123456789';
  expect(
    loadConfig({
      SHIPYARD_METRICS_TOKEN: token,
      SHIPYARD_METRICS_PORT: '9100',
      SHIPYARD_METRICS_HOST: '0.0.0.0',
      SHIPYARD_WORKER_METRICS_ADDRESS: '[::1]:9465',
    }).metrics,
  ).toEqual({ token, port: 9100, host: '0.0.0.0', workerAddress: '[::1]:9465' });
  expect(loadConfig({ SHIPYARD_WORKER_METRICS_ADDRESS: '' }).metrics.workerAddress).toBeUndefined();
});

test('malformed metrics settings stop the start, naming the variable', () => {
  expect(() => loadConfig({ SHIPYARD_METRICS_PORT: '70000' })).toThrow(/SHIPYARD_METRICS_PORT must be a port/);
  expect(() => loadConfig({ SHIPYARD_METRICS_PORT: 'nine' })).toThrow(
    /SHIPYARD_METRICS_PORT must be an integer from 0/,
  );
  expect(() => loadConfig({ PORT: '9100', SHIPYARD_METRICS_PORT: '9100' })).toThrow(/must differ from PORT/);
  expect(() => loadConfig({ SHIPYARD_METRICS_HOST: '0.0.0.0' })).toThrow(/only with SHIPYARD_METRICS_PORT/);
  expect(() => loadConfig({ SHIPYARD_METRICS_TOKEN: 'short' })).toThrow(/SHIPYARD_METRICS_TOKEN must be at least 16/);
  expect(() => loadConfig({ SHIPYARD_METRICS_TOKEN: 'has a space in it, too long' })).toThrow(/without spaces/);
  for (const address of ['localhost:9464', '127.0.0.1', '127.0.0.1:0', '::1:9464', '[127.0.0.1]:9464'])
    expect(() => loadConfig({ SHIPYARD_WORKER_METRICS_ADDRESS: address })).toThrow(
      /SHIPYARD_WORKER_METRICS_ADDRESS must be ip:port/,
    );
});

test('sandbox, run log and template settings: defaults that work on a dev machine, each variable read, bad values refused by name', () => {
  const { sandbox, forgeTemplates } = loadConfig({});
  expect(sandbox).toEqual(
    expect.objectContaining({
      memoryMb: 512,
      scratchMb: 128,
      cgroups: 'auto',
      logLinesPerStep: 5000,
      logLinesPerRun: 20000,
    }),
  );
  expect(forgeTemplates).toEqual({ urlBytes: 8192, headersBytes: 16384, bodyBytes: 1024 * 1024 });
  const set = loadConfig({
    SHIPYARD_SANDBOX_SCRATCH_MB: '64',
    SHIPYARD_SANDBOX_CGROUPS: 'off',
    SHIPYARD_FORGE_LOG_LINES_PER_STEP: '10',
    SHIPYARD_FORGE_LOG_LINES_PER_RUN: '100',
    SHIPYARD_FORGE_TEMPLATE_BODY_BYTES: '64kb',
  });
  expect(set.sandbox).toEqual(
    expect.objectContaining({ scratchMb: 64, cgroups: 'off', logLinesPerStep: 10, logLinesPerRun: 100 }),
  );
  expect(set.forgeTemplates.bodyBytes).toBe(65536);
  expect(() => loadConfig({ SHIPYARD_SANDBOX_SCRATCH_MB: '500' })).toThrow(
    'SHIPYARD_SANDBOX_SCRATCH_MB (500) must leave at least 16 MB of SHIPYARD_SCRIPT_MEMORY_MB (512)',
  );
  expect(() => loadConfig({ SHIPYARD_SANDBOX_CGROUPS: 'v1' })).toThrow(/SHIPYARD_SANDBOX_CGROUPS must be auto or off/);
  expect(() => loadConfig({ SHIPYARD_FORGE_TEMPLATE_URL_BYTES: 'lots' })).toThrow(
    /SHIPYARD_FORGE_TEMPLATE_URL_BYTES: not a byte size/,
  );
});

test('database limits: short for the API, longer for workers and maintenance; each overridable by its variable', () => {
  const { database } = loadConfig({}).limits;
  expect(database.api).toEqual({
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
    acquireTimeoutMs: 2_000,
  });
  expect(database.worker.statementTimeoutMs).toBeGreaterThan(database.api.statementTimeoutMs);
  expect(database.maintenance.statementTimeoutMs).toBeGreaterThan(database.worker.statementTimeoutMs);
  const tuned = loadConfig({
    SHIPYARD_PG_STATEMENT_TIMEOUT_MS: '1500',
    SHIPYARD_WORKER_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: '90000',
    SHIPYARD_MAINTENANCE_PG_ACQUIRE_TIMEOUT_MS: '5000',
  }).limits.database;
  expect(tuned.api.statementTimeoutMs).toBe(1500);
  expect(tuned.worker.idleInTransactionTimeoutMs).toBe(90_000);
  expect(tuned.maintenance.acquireTimeoutMs).toBe(5000);
  expect(() => loadConfig({ SHIPYARD_PG_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/SHIPYARD_PG_STATEMENT_TIMEOUT_MS/);
});

test('connection timeouts refuse a headers timeout longer than the request timeout', () => {
  expect(() =>
    loadConfig({ SHIPYARD_HTTP_REQUEST_TIMEOUT_MS: '1000', SHIPYARD_HTTP_HEADERS_TIMEOUT_MS: '2000' }),
  ).toThrow(/HEADERS_TIMEOUT/);
});

test('forge runs: 10 running runs, 5 concurrent actions and 30 starts a minute per tenant, a 30 min step budget, 64 KiB of parameters, a 30 s recheck and a 5 min reconciliation, unless configured otherwise', () => {
  expect(loadConfig({}).forge).toEqual({
    logStreamsPerTenant: 20,
    runningRunsPerTenant: 10,
    actionSlotsPerTenant: 5,
    runStartsPerMinute: 30,
    stepBudgetSeconds: 1800,
    parametersMaxBytes: 65_536,
    slotRecheckSeconds: 30,
    reconcileIntervalMs: 5 * 60_000,
  });
  const configured = loadConfig({
    SHIPYARD_FORGE_RUNNING_RUNS_PER_TENANT: '3',
    SHIPYARD_FORGE_ACTION_SLOTS_PER_TENANT: '2',
    SHIPYARD_FORGE_RUN_STARTS_PER_MINUTE: '7',
    SHIPYARD_FORGE_STEP_BUDGET: '10m',
    SHIPYARD_FORGE_PARAMETERS_MAX_BYTES: '1mb',
    SHIPYARD_FORGE_SLOT_RECHECK: '5s',
    SHIPYARD_FORGE_RECONCILE_INTERVAL: '1m',
  }).forge;
  expect(configured).toMatchObject({
    runningRunsPerTenant: 3,
    actionSlotsPerTenant: 2,
    runStartsPerMinute: 7,
    stepBudgetSeconds: 600,
    parametersMaxBytes: 1024 * 1024,
    slotRecheckSeconds: 5,
    reconcileIntervalMs: 60_000,
  });
  expect(() => loadConfig({ SHIPYARD_FORGE_RUNNING_RUNS_PER_TENANT: '0' })).toThrow(
    /SHIPYARD_FORGE_RUNNING_RUNS_PER_TENANT/,
  );
  expect(() => loadConfig({ SHIPYARD_FORGE_STEP_BUDGET: 'soon' })).toThrow(/SHIPYARD_FORGE_STEP_BUDGET/);
});

test('parsed-input budgets have working defaults, each variable overrides its own, and zero stops the start', () => {
  expect(loadConfig({}).inputLimits).toEqual({
    jsonDepth: 64,
    jsonArrayItems: 1_000,
    documents: 500,
    nodes: 20_000,
    keysPerMap: 1_000,
    notesPerDocument: 50,
    parseTimeoutMs: 2_000,
    parseThreads: 2,
  });
  expect(
    loadConfig({
      SHIPYARD_LIMIT_JSON_DEPTH: '16',
      SHIPYARD_LIMIT_JSON_ARRAY_ITEMS: '50',
      SHIPYARD_MANIFEST_PARSE_TIMEOUT_MS: '500',
    }).inputLimits,
  ).toMatchObject({ jsonDepth: 16, jsonArrayItems: 50, parseTimeoutMs: 500, nodes: 20_000 });
  expect(() => loadConfig({ SHIPYARD_MANIFEST_MAX_NODES: '0' })).toThrow(/SHIPYARD_MANIFEST_MAX_NODES/);
});
