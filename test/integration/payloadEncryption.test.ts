import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Keyring, parseEncryptionKeys } from '../../core/crypto/keyring';
import { EncryptionCodec } from '../../core/crypto/payloadCodec';
import {
  callApi,
  sessionToken,
  startApi,
  startWorkers,
  testConfig,
  type TestApi,
  type TestWorkers,
} from '../support/harness';
import { launch, ROOT, until } from '../support/processes';
import { FAKES_HOST } from '../support/testEnv';
import { payloadsIn } from '../support/payloads';

// What Temporal keeps of a forge run is ciphertext: read back with a client that has no codec,
// its history shows none of the run's data; the operators' codec endpoint (and the Temporal CLI
// through it) turns it back into plaintext.

type Payload = temporal.api.common.v1.IPayload;

const run = randomUUID().slice(0, 8);
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Recognisable values in every place a run's data reaches history, and one that must not: an
// action's result goes from its activity to the database and never enters history at all.
const MARK = {
  parameter: `param-${run}-payments`,
  header: `header-${run}-deploy-key`,
  result: `result-${run}-body`,
  comment: `comment-${run}-approved`,
  failure: `failure-${run}-body`,
};
const IN_HISTORY = Object.entries(MARK).filter(([where]) => where !== 'result');

let api: TestApi;
let workers: TestWorkers;
let target: Server;
let targetUrl: string;
let operator: string;
let tenantAdmin: string;
let rawTemporal: Client;
let workflowId: string;
let history: temporal.api.history.v1.IHistory;

beforeAll(async () => {
  workers = await startWorkers(['forge']);
  api = await startApi();
  // The action targets: one answers with a body worth hiding, the other fails with one.
  target = createServer((req, res) => {
    req.resume();
    const failing = req.url?.startsWith('/fail/');
    res.writeHead(failing ? 400 : 200, { 'content-type': 'text/plain' });
    res.end(failing ? MARK.failure : MARK.result);
  });
  await new Promise<void>((resolve) => target.listen(0, FAKES_HOST, resolve));
  targetUrl = `http://${FAKES_HOST}:${(target.address() as AddressInfo).port}`;
  operator = (
    await sessionToken({ tenant: testConfig().platformTenant, email: `ops-${run}@platform.test`, roles: ['admin'] })
  ).token;
  tenantAdmin = (await sessionToken({ tenant: `codec-${run}`, email: 'admin@codec.test', roles: ['admin'] })).token;
  // A client without the codec: what the Web UI, or anyone reading the server's store, sees.
  const config = testConfig();
  const connection = await Connection.connect({ address: config.temporal.address });
  rawTemporal = new Client({ connection, namespace: config.temporal.namespace });
}, 60_000);

afterAll(async () => {
  await rawTemporal?.connection.close();
  await api.close();
  await workers.stop();
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
});

const call = (token: string, method: string, apiPath: string, body?: unknown) =>
  callApi(api, token, method, apiPath, body);
const text = (bytes: Uint8Array | string | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** Every string and byte field of a history, as text: where plaintext would show. */
function textsIn(node: unknown, found: string[] = []): string[] {
  if (typeof node === 'string') found.push(node);
  else if (node instanceof Uint8Array) found.push(Buffer.from(node).toString('latin1'));
  else if (node && typeof node === 'object') for (const value of Object.values(node)) textsIn(value, found);
  return found;
}

const toJson = ({ metadata, data }: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  ),
  data: Buffer.from(data ?? []).toString('base64'),
});

describe('a forge run with a parameter, a request header, an approval comment, a result and a failure', () => {
  beforeAll(async () => {
    const mold = await call(tenantAdmin, 'POST', '/forge/molds', {
      slug: `codec-${run}`,
      name: 'Encrypted history',
      parameters: [{ name: 'service', type: 'string', required: true }],
      actions: [
        // The starter approves: this suite is about what the history holds, not who approves.
        { name: 'gate', type: 'approval', approvers: { allow_self_approval: true } },
        {
          name: 'announce',
          type: 'api-call',
          config: {
            method: 'POST',
            url: `${targetUrl}/ok/\${{ parameters.service }}`,
            headers: { 'x-deploy-key': MARK.header },
            body: { service: '${{ parameters.service }}' },
          },
        },
        { name: 'break', type: 'api-call', config: { url: `${targetUrl}/fail/\${{ parameters.service }}` } },
      ],
    });
    expect(mold.status).toBe(201);
    const started = await call(tenantAdmin, 'POST', '/forge/runs', {
      mold_slug: mold.body.slug,
      parameters: { service: MARK.parameter },
    });
    expect(started.status).toBe(201);
    workflowId = started.body.workflow_id;
    const reaches = (statuses: string[]) =>
      until(`run ${statuses.join(' or ')}`, 60, async () => {
        const { body } = await call(tenantAdmin, 'GET', `/forge/runs/${started.body.id}`);
        return statuses.includes(body.status) ? body : undefined;
      });
    await reaches(['awaiting_approval']);
    expect(
      (await call(tenantAdmin, 'POST', `/forge/runs/${started.body.id}/approve`, { comment: MARK.comment })).status,
    ).toBe(200);
    const ended = await reaches(['completed', 'failed']);
    // The run itself went as designed: the data reached each place this test looks for it.
    expect(ended.status).toBe('failed');
    expect(ended.error).toContain(MARK.failure);
    expect(ended.steps[1].output.body).toBe(MARK.result);
    history = await rawTemporal.workflow.getHandle(workflowId).fetchHistory();
  }, 120_000);

  test('its history read from Temporal without the codec holds none of that data, anywhere: inputs, results, signals, failures', () => {
    const eventTypes = new Set(history.events!.map((event) => temporal.api.enums.v1.EventType[event.eventType!]));
    // The places the data went through are all there.
    expect([...eventTypes]).toEqual(
      expect.arrayContaining([
        'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
        'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
        'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
        'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
        'EVENT_TYPE_ACTIVITY_TASK_FAILED',
        'EVENT_TYPE_MARKER_RECORDED',
      ]),
    );
    const everything = textsIn(history).join('\n');
    for (const [where, value] of Object.entries(MARK))
      expect([where, everything.includes(value)]).toEqual([where, false]);
    // The failure's message and stack trace moved into an encrypted payload too.
    const failed = history.events!.find((event) => event.activityTaskFailedEventAttributes)!
      .activityTaskFailedEventAttributes!.failure!;
    expect(failed.message).toBe('Encoded failure');
    expect(failed.stackTrace).toBe('');
    expect(text(failed.encodedAttributes?.metadata?.encoding)).toBe('binary/encrypted');
  });

  test("every payload in it is binary/encrypted under the current key id, but the local-activity markers' own bookkeeping and the search attributes' opaque ids", () => {
    const payloads = payloadsIn(history);
    expect(payloads.length).toBeGreaterThan(20);
    // The SDK core writes each local-activity marker's `data` (activity id and type, attempt,
    // times) itself, past the codec; the activity's result beside it is encrypted.
    const markerData = history.events!.flatMap(
      (event) => event.markerRecordedEventAttributes?.details?.data?.payloads ?? [],
    );
    // Temporal indexes search attributes, so they bypass codecs: they hold only uuids and a kind.
    const searchAttributes = history.events!.flatMap((event) =>
      Object.values(event.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    // The run names its workflow version in its (encrypted) input: no patch marker, and no
    // TemporalChangeVersion upsert, carries a patch id in the clear.
    const patchEvents = history.events!.filter(
      (event) =>
        event.markerRecordedEventAttributes?.markerName === 'core_patch' ||
        event.upsertWorkflowSearchAttributesEventAttributes,
    );
    expect(patchEvents).toEqual([]);
    const plain = [...markerData, ...searchAttributes];
    expect(payloads.filter((payload) => text(payload.metadata?.encoding) !== 'binary/encrypted')).toEqual(
      expect.arrayContaining(plain),
    );
    expect(payloads.filter((payload) => text(payload.metadata?.encoding) !== 'binary/encrypted')).toHaveLength(
      plain.length,
    );
    for (const payload of markerData) {
      expect(JSON.parse(text(payload.data))).toEqual(expect.objectContaining({ activity_type: expect.any(String) }));
    }
    const indexed = searchAttributes.map((payload) => JSON.parse(text(payload.data)) as string);
    expect(indexed.filter((value) => value !== 'forge-run')).toEqual([
      expect.stringMatching(UUID_PATTERN),
      expect.stringMatching(UUID_PATTERN),
    ]);
    expect(indexed).toContain('forge-run');
    const keyIds = new Set(
      payloads.filter((p) => !plain.includes(p)).map((payload) => text(payload.metadata?.['encryption-key-id'])),
    );
    expect([...keyIds]).toEqual([api.deps.keyring.currentKeyId]);
  });

  test('the codec endpoint turns that history back into its plaintext for a platform operator', async () => {
    const encrypted = payloadsIn(history).filter((payload) => text(payload.metadata?.encoding) === 'binary/encrypted');
    const res = await call(operator, 'POST', '/temporal-codec/decode', { payloads: encrypted.map(toJson) });
    expect(res.status).toBe(200);
    expect(res.body.payloads).toHaveLength(encrypted.length);
    const decoded = res.body.payloads
      .map((payload: { data: string }) => Buffer.from(payload.data, 'base64').toString('utf8'))
      .join('\n');
    for (const [where, value] of IN_HISTORY) expect([where, decoded.includes(value)]).toEqual([where, true]);
    expect(decoded).not.toContain(MARK.result);
    expect(Buffer.from(res.body.payloads[0].metadata.encoding, 'base64').toString()).toBe('json/plain');
  });

  test('the Temporal CLI shows the run in plaintext through the codec endpoint with an operator token, ciphertext without', async () => {
    const cli = (
      await promisify(execFile)('bash', [path.join(ROOT, 'scripts', 'services'), 'temporal-cli'])
    ).stdout.trim();
    const { address, namespace } = testConfig().temporal;
    const show = (...extra: string[]) =>
      promisify(execFile)(cli, [
        'workflow',
        'show',
        '-w',
        workflowId,
        '--address',
        address,
        '-n',
        namespace,
        '-o',
        'json',
        ...extra,
      ]);
    // Its JSON output carries each payload as protobuf JSON: the data in base64.
    const shownData = async (...extra: string[]) =>
      payloadsIn(JSON.parse((await show(...extra)).stdout))
        .map((payload) => Buffer.from((payload.data as unknown as string) ?? '', 'base64').toString('utf8'))
        .join('\n');
    const plain = await shownData(
      '--codec-endpoint',
      `${api.url}/api/v1/temporal-codec`,
      '--codec-auth',
      `Bearer ${operator}`,
    );
    for (const [where, value] of IN_HISTORY) expect([where, plain.includes(value)]).toEqual([where, true]);
    const raw = await shownData();
    for (const [where, value] of Object.entries(MARK)) expect([where, raw.includes(value)]).toEqual([where, false]);
  }, 30_000);
});

describe('the codec endpoint', () => {
  const somePayload = () =>
    toJson({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(`{"hello":"${run}"}`) });

  test('encodes as the workers do: the result is binary/encrypted under the current key and decodes back', async () => {
    const encoded = await call(operator, 'POST', '/temporal-codec/encode', { payloads: [somePayload()] });
    expect(encoded.status).toBe(200);
    const [payload] = encoded.body.payloads;
    expect(Buffer.from(payload.metadata['encryption-key-id'], 'base64').toString()).toBe(api.deps.keyring.currentKeyId);
    expect(Buffer.from(payload.data, 'base64').toString('latin1')).not.toContain(run);
    const decoded = await call(operator, 'POST', '/temporal-codec/decode', encoded.body);
    expect(decoded.body).toEqual({ payloads: [somePayload()] });
  });

  test('refuses a tenant admin (403) and a caller without a token (401)', async () => {
    for (const direction of ['encode', 'decode']) {
      const asTenantAdmin = await call(tenantAdmin, 'POST', `/temporal-codec/${direction}`, {
        payloads: [somePayload()],
      });
      expect(asTenantAdmin.status).toBe(403);
      expect(asTenantAdmin.body.error.code).toBe('FORBIDDEN');
      const anonymous = await fetch(`${api.url}/api/v1/temporal-codec/${direction}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: [somePayload()] }),
      });
      expect(anonymous.status).toBe(401);
    }
  });

  test('answers a malformed body, and a payload it cannot open, with a 400 naming the problem', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.payloads'],
      [{ payloads: [{ data: 'not base64!' }] }, 'body.payloads.0.data'],
      [{ payloads: [{ metadata: { encoding: 42 } }] }, 'body.payloads.0.metadata.encoding'],
      [{ payloads: [{ data: '', extra: 1 }] }, 'body.payloads.0.extra'],
    ];
    for (const [body, field] of cases) {
      const res = await call(operator, 'POST', '/temporal-codec/decode', body);
      expect([field, res.status]).toEqual([field, 400]);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const elsewhere = new EncryptionCodec(
      new Keyring(parseEncryptionKeys(`retired-${run}:${randomBytes(32).toString('base64')}`)),
    );
    const [foreign] = await elsewhere.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') },
    ]);
    const res = await call(operator, 'POST', '/temporal-codec/decode', { payloads: [somePayload(), toJson(foreign)] });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      {
        field: 'body.payloads.1',
        message: `sealed with key "retired-${run}", which is not among the configured encryption keys`,
      },
    ]);
  });

  test('lets the Temporal Web UI call it from a browser: preflight from its origin, credentials, codec paths only', async () => {
    const uiOrigin = new URL(testConfig().temporal.uiUrl).origin;
    const preflight = (origin: string, apiPath = '/api/v1/temporal-codec/decode') =>
      fetch(`${api.url}${apiPath}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,x-namespace',
        },
      });
    const allowed = await preflight(uiOrigin);
    expect(allowed.status).toBe(204);
    expect(Object.fromEntries(allowed.headers)).toEqual(
      expect.objectContaining({
        'access-control-allow-origin': uiOrigin,
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'Authorization, Content-Type, X-Namespace',
      }),
    );
    expect((await preflight('http://elsewhere.test')).headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(uiOrigin, '/api/v1/integrations')).headers.get('access-control-allow-origin')).toBeNull();
    // A refusal reaches the UI as one, not as a network error.
    const refused = await fetch(`${api.url}/api/v1/temporal-codec/decode`, {
      method: 'POST',
      headers: { origin: uiOrigin, 'content-type': 'application/json', 'x-namespace': 'default' },
      body: JSON.stringify({ payloads: [] }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(uiOrigin);
  });
});

test('the Temporal UI link is in run responses and /system only for platform operators', async () => {
  const moldFor = async (token: string) => {
    const slug = `link-${randomUUID().slice(0, 8)}`;
    await call(token, 'POST', '/forge/molds', { slug, name: 'link', actions: [{ name: 'wait', type: 'approval' }] });
    return (await call(token, 'POST', '/forge/runs', { mold_slug: slug, parameters: {} })).body;
  };
  const [ours, theirs] = await Promise.all([moldFor(operator), moldFor(tenantAdmin)]);
  const { uiUrl, namespace } = testConfig().temporal;
  expect(ours.temporal_ui_url).toBe(`${uiUrl}/namespaces/${namespace}/workflows/forge-run-${ours.id}`);
  expect((await call(operator, 'GET', `/forge/runs/${ours.id}`)).body.temporal_ui_url).toBe(ours.temporal_ui_url);
  expect(theirs).not.toHaveProperty('temporal_ui_url');
  expect((await call(tenantAdmin, 'GET', `/forge/runs/${theirs.id}`)).body).not.toHaveProperty('temporal_ui_url');
  for (const [token, id] of [
    [operator, ours.id],
    [tenantAdmin, theirs.id],
  ])
    await call(token, 'POST', `/forge/runs/${id}/cancel`);

  const [forOperator, forTenantAdmin] = await Promise.all([
    call(operator, 'GET', '/system'),
    call(tenantAdmin, 'GET', '/system'),
  ]);
  expect(forOperator.body.services.temporal.ui_url).toBe(uiUrl);
  expect(forTenantAdmin.status).toBe(200);
  expect(forTenantAdmin.body.services.temporal).not.toHaveProperty('ui_url');
}, 30_000);

describe('starting without usable keys', () => {
  const startFails = async (entry: string, env: Record<string, string>) => {
    const child = launch(entry, [], { PORT: '0', ...env }, { relay: false });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    return { code, stderr };
  };

  // (The API's refusal in production is in test/e2e/productionConfig.test.ts.)
  test('in production without SHIPYARD_ENCRYPTION_KEYS, the workers refuse to start, saying what to set', async () => {
    const { code, stderr } = await startFails('workers/main.ts', {
      NODE_ENV: 'production',
      SHIPYARD_ENCRYPTION_KEYS: '',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('NODE_ENV=production requires SHIPYARD_ENCRYPTION_KEYS');
  }, 30_000);

  test('a malformed SHIPYARD_ENCRYPTION_KEYS entry stops the start, naming the entry', async () => {
    const keys = `good:${randomBytes(32).toString('base64')},bad:c2hvcnQ=`;
    const { code, stderr } = await startFails('api/server.ts', { SHIPYARD_ENCRYPTION_KEYS: keys });
    expect(code).toBe(1);
    expect(stderr).toContain('SHIPYARD_ENCRYPTION_KEYS entry 2 ("bad"): the key must be 32 bytes in base64');
  }, 30_000);
});
