import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, parseByteSize, parseDuration } from '../../core/config';

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
  expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be a non-negative integer/);
});

test('retention keeps run logs 30 days and audit entries 365, pruned hourly, unless configured otherwise', () => {
  expect(loadConfig({}).retention).toEqual({ runLogsDays: 30, auditDays: 365, intervalMs: 3_600_000 });
  expect(
    loadConfig({
      SHIPYARD_RETENTION_RUN_LOGS_DAYS: '7',
      SHIPYARD_RETENTION_AUDIT_DAYS: '90',
      SHIPYARD_RETENTION_INTERVAL: '15m',
    }).retention,
  ).toEqual({ runLogsDays: 7, auditDays: 90, intervalMs: 15 * 60_000 });
});

test('a retention of zero days, a non-number or a malformed interval stops the start, naming the variable', () => {
  expect(() => loadConfig({ SHIPYARD_RETENTION_RUN_LOGS_DAYS: '0' })).toThrow(
    /SHIPYARD_RETENTION_RUN_LOGS_DAYS must be at least 1/,
  );
  expect(() => loadConfig({ SHIPYARD_RETENTION_AUDIT_DAYS: 'a year' })).toThrow(
    /SHIPYARD_RETENTION_AUDIT_DAYS must be a non-negative integer/,
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
  expect(() => loadConfig({ SHIPYARD_METRICS_PORT: 'nine' })).toThrow(/SHIPYARD_METRICS_PORT must be a non-negative/);
  expect(() => loadConfig({ PORT: '9100', SHIPYARD_METRICS_PORT: '9100' })).toThrow(/must differ from PORT/);
  expect(() => loadConfig({ SHIPYARD_METRICS_HOST: '0.0.0.0' })).toThrow(/only with SHIPYARD_METRICS_PORT/);
  expect(() => loadConfig({ SHIPYARD_METRICS_TOKEN: 'short' })).toThrow(/SHIPYARD_METRICS_TOKEN must be at least 16/);
  expect(() => loadConfig({ SHIPYARD_METRICS_TOKEN: 'has a space in it, too long' })).toThrow(/without spaces/);
  for (const address of ['localhost:9464', '127.0.0.1', '127.0.0.1:0', '::1:9464', '[127.0.0.1]:9464'])
    expect(() => loadConfig({ SHIPYARD_WORKER_METRICS_ADDRESS: address })).toThrow(
      /SHIPYARD_WORKER_METRICS_ADDRESS must be ip:port/,
    );
});

test('parsed-input budgets have working defaults, each variable overrides its own, and zero stops the start', () => {
  expect(loadConfig({}).inputLimits).toEqual({
    jsonDepth: 64,
    documents: 500,
    nodes: 20_000,
    keysPerMap: 1_000,
    notesPerDocument: 50,
    parseTimeoutMs: 2_000,
    parseThreads: 2,
  });
  expect(
    loadConfig({ SHIPYARD_LIMIT_JSON_DEPTH: '16', SHIPYARD_MANIFEST_PARSE_TIMEOUT_MS: '500' }).inputLimits,
  ).toMatchObject({ jsonDepth: 16, parseTimeoutMs: 500, nodes: 20_000 });
  expect(() => loadConfig({ SHIPYARD_MANIFEST_MAX_NODES: '0' })).toThrow(/SHIPYARD_MANIFEST_MAX_NODES/);
});
