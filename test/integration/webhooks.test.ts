import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../../core/config';
import { createKeyring } from '../../core/crypto/keyring';
import { EncryptionCodec, encryptedDataConverter } from '../../core/crypto/payloadCodec';
import { withTenant } from '../../db/tenancy';
import { createWorkerClients } from '../../workers/clients';
import { startWebhookDispatch } from '../../workers/notifiedLoops';
import {
  callApi,
  sessionToken,
  startApi,
  startWorkers,
  testConfig,
  type Reply,
  type TestApi,
  type TestWorkers,
} from '../support/harness';
import { forgeCaller } from '../support/forgeRuns';
import { startTarget, type Target } from '../support/httpTarget';
import { devKey } from '../support/licenseSuite';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';
import { EVENT_KINDS } from '../../core/webhooks/types';

// Outbound webhooks end to end: changes through the API, the platform workers' dispatcher and
// delivery workflows on the real Temporal, and a local receiver that verifies each delivery
// with the `standardwebhooks` package (never our own code). Durations are shortened by config.

const config: Config = {
  ...testConfig(),
  webhooks: {
    attemptTimeoutMs: 2_000,
    retryBaseDelayMs: 200,
    retryMaxDelayMs: 800,
    retryWindowMs: 60_000,
    inFlightPerWebhook: 1,
    inFlightPerTenant: 8,
    dispatchPollMs: 500,
  },
};

const SECRET = `whsec_${Buffer.from('a test secret of at least 24 bytes').toString('base64')}`;

/** The platform workers with the dispatcher beside them, as workers/main.ts runs them. */
async function startPlatform(): Promise<{ stop(): Promise<void> }> {
  const workers: TestWorkers = await startWorkers(['platform'], { config });
  const clients = createWorkerClients(config, { poolMax: 2 });
  const connection = await Connection.connect({ address: config.temporal.address });
  const dataConverter = encryptedDataConverter(new EncryptionCodec(createKeyring(config)));
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter });
  const dispatch = await startWebhookDispatch(config, clients, temporal, pino({ level: 'silent' }));
  return {
    async stop() {
      await dispatch.stop();
      await workers.stop();
      await connection.close();
      await clients.close();
    },
  };
}

let api: TestApi;
let platform: { stop(): Promise<void> } | undefined;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  api = await startApi();
  platform = await startPlatform();
}, 60_000);
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await platform?.stop();
  await api.close();
}, 30_000);

jest.setTimeout(60_000);

const receiver = async (host?: string) => {
  const started = await startWebhookReceiver(host);
  receivers.push(started);
  return started;
};

/** A fresh tenant (so no other test's events reach its webhooks) with an admin and an integration. */
async function tenant() {
  const { token, tenantId } = await sessionToken({
    tenant: `webhooks-${randomUUID().slice(0, 8)}`,
    email: 'admin@webhooks.test',
    roles: ['admin'],
  });
  const call = (method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
  const integration = await call('POST', '/integrations', { name: 'hooks', type: 'custom', config: {} });
  expect(integration.status).toBe(201);
  const addWebhook = async (url: string, body: Record<string, unknown> = {}) => {
    const created = await call('POST', `/integrations/${integration.body.id}/webhooks`, {
      url,
      events: ['entity.created'],
      secret: SECRET,
      ...body,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const createEntity = async (name = `svc-${randomUUID().slice(0, 8)}`) => {
    const created = await call('POST', '/entities', { name, type: 'service' });
    expect(created.status).toBe(201);
    return created.body;
  };
  const deliveries = async (webhookId: string) => {
    const page = await call('GET', `/integrations/webhooks/${webhookId}/deliveries`);
    expect(page.status).toBe(200);
    return page.body.deliveries;
  };
  /** Polls the delivery log until `done` holds of it. */
  const deliveriesWhen = async (webhookId: string, done: (list: Reply['body'][]) => boolean) => {
    for (let i = 0; i < 200; i++) {
      const list = await deliveries(webhookId);
      if (done(list)) return list;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`delivery log never matched: ${JSON.stringify(await deliveries(webhookId))}`);
  };
  return {
    token,
    tenantId,
    call,
    integrationId: integration.body.id as string,
    addWebhook,
    createEntity,
    deliveries,
    deliveriesWhen,
  };
}

const verify = (request: { headers: Record<string, unknown>; body: string }, secret = SECRET) =>
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Reply['body'];

describe('deliveries', () => {
  test('an entity created through the API reaches a subscribed webhook, signed so that standardwebhooks verifies it, and the log says delivered', async () => {
    const t = await tenant();
    const hook = await receiver();
    const webhookId = await t.addWebhook(hook.url);
    const entity = await t.createEntity();
    const [request] = await hook.arrival(1);
    expect(verify(request)).toMatchObject({
      type: 'entity.created',
      data: { entity: { id: entity.id, name: entity.name } },
    });
    expect(request.headers['webhook-id']).toMatch(/^msg_/);
    const [delivery] = await t.deliveriesWhen(webhookId, (list) => list[0]?.status === 'delivered');
    expect(delivery).toMatchObject({
      event_type: 'entity.created',
      message_id: request.headers['webhook-id'],
      attempts: 1,
    });
    expect(delivery.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null })]);
  });

  test('a receiver that fails with 500 and 503 gets the same webhook-id again until it answers 200', async () => {
    const t = await tenant();
    const hook = await receiver();
    hook.script = [{ status: 500 }, { status: 503 }];
    const webhookId = await t.addWebhook(hook.url);
    await t.createEntity();
    const requests = await hook.arrival(3);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const request of requests) expect(verify(request).type).toBe('entity.created');
    const [delivery] = await t.deliveriesWhen(webhookId, (list) => list[0]?.status === 'delivered');
    expect(delivery.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([500, 503, 200]);
  });

  test('a 400 is final: one attempt, the delivery failed, no retry', async () => {
    const t = await tenant();
    const hook = await receiver();
    hook.script = [{ status: 400 }];
    const webhookId = await t.addWebhook(hook.url);
    await t.createEntity();
    const [delivery] = await t.deliveriesWhen(webhookId, (list) => list[0]?.status === 'failed');
    expect(delivery.attempt_log).toEqual([
      expect.objectContaining({ status_code: 400, error: 'answered 400: not retried' }),
    ]);
    expect(hook.requests).toHaveLength(1);
  });

  test('a 410 disables the webhook: later events are not delivered to it', async () => {
    const t = await tenant();
    const hook = await receiver();
    hook.script = [{ status: 410 }];
    const webhookId = await t.addWebhook(hook.url);
    await t.createEntity();
    await t.deliveriesWhen(webhookId, (list) => list[0]?.status === 'failed');
    const listed = await t.call('GET', `/integrations/${t.integrationId}/webhooks`);
    expect(listed.body.webhooks).toEqual([expect.objectContaining({ id: webhookId, active: false })]);
    const activity = await t.call('GET', '/admin/activity');
    expect(activity.body.items).toContainEqual(
      expect.objectContaining({ eventType: 'webhook.disabled', targetId: webhookId, actorType: 'system' }),
    );
    await t.createEntity();
    const other = await receiver();
    await t.addWebhook(other.url);
    await t.createEntity();
    await other.arrival(1);
    expect(hook.requests).toHaveLength(1);
    expect(await t.deliveries(webhookId)).toHaveLength(1);
  });

  test("a 429's Retry-After is waited out (longer than any backoff this config allows)", async () => {
    const t = await tenant();
    const hook = await receiver();
    hook.script = [{ status: 429, retryAfter: '3' }];
    await t.addWebhook(hook.url);
    await t.createEntity();
    const [first, second] = await hook.arrival(2);
    expect(second.at - first.at).toBeGreaterThanOrEqual(2_900);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  });

  test("a receiver that hangs holds only its webhook's one delivery under way: another webhook of the tenant gets every delivery meanwhile, and the hanging one's others wait unstarted", async () => {
    const t = await tenant();
    const hanging = await receiver();
    hanging.fallback = 'hang';
    const healthy = await receiver();
    const hangingId = await t.addWebhook(hanging.url);
    await t.addWebhook(healthy.url);
    for (let i = 0; i < 3; i++) await t.createEntity();
    await healthy.arrival(3);
    // Two attempts of one delivery timed out: had the others started, they would have timed out too.
    const list = await t.deliveriesWhen(hangingId, (l) => l.length === 3 && l.some((d) => d.attempts >= 2));
    expect(list.filter((d: { attempts: number }) => d.attempts > 0)).toHaveLength(1);
    expect(hanging.requests).toHaveLength(2);
  });

  test("a dead receiver's backlog beyond the tenant's cap does not hold up the tenant's other webhooks", async () => {
    const t = await tenant();
    const dead = await receiver();
    dead.fallback = 'hang';
    await t.addWebhook(dead.url);
    // More waiting deliveries than the tenant may have under way (8), all older than the next.
    for (let i = 0; i < 10; i++) await t.createEntity();
    await dead.arrival(1);
    const healthy = await receiver();
    await t.addWebhook(healthy.url);
    const entity = await t.createEntity();
    const [request] = await healthy.arrival(1);
    expect(verify(request).data.entity.id).toBe(entity.id);
  });

  test('a webhook whose host name resolves to a private address (localhost, not allowed) fails at once with the egress refusal logged, and the receiver gets nothing', async () => {
    const t = await tenant();
    const hook = await receiver('127.0.0.1');
    // A host name passes creation: the guard checks what it resolves to, at each attempt.
    const webhookId = await t.addWebhook(hook.url.replace('127.0.0.1', 'localhost'));
    await t.createEntity();
    const [delivery] = await t.deliveriesWhen(webhookId, (list) => list[0]?.status === 'failed');
    expect(delivery.attempts).toBe(1);
    expect(delivery.attempt_log[0]).toMatchObject({
      status_code: null,
      error: expect.stringContaining('egress refused: localhost (127.0.0.1) is a loopback address'),
    });
    expect(hook.requests).toEqual([]);
  });

  test('redeliver sends the event again with the same webhook-id, as a new delivery in the log', async () => {
    const t = await tenant();
    const hook = await receiver();
    const webhookId = await t.addWebhook(hook.url);
    await t.createEntity();
    const [first] = await t.deliveriesWhen(webhookId, (list) => list[0]?.status === 'delivered');
    const redelivered = await t.call('POST', `/integrations/webhooks/${webhookId}/deliveries/${first.id}/redeliver`);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toMatchObject({ status: 'pending', message_id: first.message_id, attempts: 0 });
    const [, again] = await hook.arrival(2);
    expect(again.headers['webhook-id']).toBe(first.message_id);
    expect(verify(again).type).toBe('entity.created');
    const list = await t.deliveriesWhen(webhookId, (l) => l.length === 2 && l.every((d) => d.status === 'delivered'));
    expect(list.map((d: { id: string }) => d.id)).toEqual([redelivered.body.id, first.id]);
  });

  test('an event committed while no worker runs is delivered once the workers start again', async () => {
    const t = await tenant();
    const hook = await receiver();
    await t.addWebhook(hook.url);
    await platform!.stop();
    platform = undefined;
    const entity = await t.createEntity();
    platform = await startPlatform();
    const [request] = await hook.arrival(1);
    expect(verify(request).data.entity.id).toBe(entity.id);
  });
});

describe('events', () => {
  test('each kind is recorded by the change that causes it and delivered: entities (API and agent push), forge runs (completed, failed, awaiting approval), governance, findings, license, agents', async () => {
    const t = await tenant();
    const hook = await receiver();
    await t.addWebhook(hook.url, { events: EVENT_KINDS });
    const forgeWorkers = await startWorkers(['forge'], { config });
    const targets: Target[] = [];
    try {
      const entity = await t.createEntity();
      expect((await t.call('PUT', `/entities/${entity.id}`, { description: 'now described' })).status).toBe(200);
      expect((await t.call('DELETE', `/entities/${entity.id}`)).status).toBe(204);
      const scanned = await t.createEntity();
      const finding = await t.call('POST', '/security/findings', {
        entity_id: scanned.id,
        type: 'vulnerability',
        severity: 'critical',
        title: 'CVE in openssl',
        source: 'scanner',
      });
      expect(finding.status).toBe(201);
      expect((await t.call('POST', '/license/activate', { license_key: devKey() })).status).toBe(200);
      const registered = await t.call('POST', '/k8s/agents/register', { cluster_id: 'hooks-1', display_name: 'Hooks' });
      expect(registered.status).toBe(201);
      const pushed = await callApi(api, registered.body.token, 'POST', '/k8s/agents/push', {
        cluster_id: 'hooks-1',
        workloads: [
          { namespace: 'n', kind: 'Deployment', name: 'w', labels: { 'app.kubernetes.io/name': 'pushed-svc' } },
        ],
      });
      expect(pushed.status).toBe(200);
      const forge = forgeCaller(api, t.token);
      for (const status of [200, 400]) {
        const target = await startTarget();
        targets.push(target);
        target.status = status;
        const mold = await forge.createMold({
          actions: [{ name: 'call', type: 'api-call', config: { url: target.url } }],
        });
        await forge.finished((await forge.startRun(mold.slug)).id);
      }
      const gated = await forge.createMold({ actions: [{ name: 'gate', type: 'approval' }] });
      const waiting = await forge.startRun(gated.slug);
      // entity.created three times: two through the API, one by the push.
      const requests = await hook.arrival(EVENT_KINDS.length + 2);
      expect((await forge.call('POST', `/forge/runs/${waiting.id}/cancel`)).status).toBe(200);
      const events = requests.map((request) => verify(request));
      expect(new Set(events.map((event) => event.type))).toEqual(new Set(EVENT_KINDS));
      const created = events.filter((event) => event.type === 'entity.created').map((event) => event.data.entity);
      expect(created).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: entity.id, source: 'api' }),
          expect.objectContaining({ service_id: 'pushed-svc', source: 'kubernetes' }),
        ]),
      );
      expect(events.find((event) => event.type === 'entity.updated')!.data.fields).toEqual(['description']);
      expect(events.find((event) => event.type === 'security.finding.opened')!.data.finding.id).toBe(finding.body.id);
      expect(events.find((event) => event.type === 'forge.run.failed')!.data.run.status).toBe('failed');
    } finally {
      await forgeWorkers.stop();
      await Promise.all(targets.map((target) => target.close()));
    }
  });
});

describe('CRUD', () => {
  test('without a secret one is generated and returned once, in the 201; no read returns it', async () => {
    const t = await tenant();
    const created = await t.call('POST', `/integrations/${t.integrationId}/webhooks`, {
      url: 'https://hooks.example.com/in',
      events: ['entity.created', 'forge.run.failed'],
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(created.body).toMatchObject({ active: true, events: ['entity.created', 'forge.run.failed'] });
    const listed = await t.call('GET', `/integrations/${t.integrationId}/webhooks`);
    expect(listed.body.webhooks).toHaveLength(1);
    expect(listed.body.webhooks[0]).not.toHaveProperty('secret');
    const stored = await withTenant(api.deps.db, t.tenantId, (trx) =>
      trx('webhooks').where({ id: created.body.id }).first(),
    );
    expect(JSON.stringify(stored)).not.toContain(created.body.secret.slice('whsec_'.length));
    const updated = await t.call('PUT', `/integrations/webhooks/${created.body.id}`, { active: false, secret: SECRET });
    expect(updated.status).toBe(200);
    expect(updated.body).not.toHaveProperty('secret');
    expect(updated.body.active).toBe(false);
    expect((await t.call('DELETE', `/integrations/webhooks/${created.body.id}`)).status).toBe(204);
    expect((await t.call('GET', `/integrations/webhooks/${created.body.id}/deliveries`)).status).toBe(404);
  });

  test('an unknown event kind is a 400 naming it; a malformed secret, a non-http URL and a private address the guard would refuse are 400s', async () => {
    const t = await tenant();
    const path = `/integrations/${t.integrationId}/webhooks`;
    const unknown = await t.call('POST', path, {
      url: 'https://x.example/h',
      events: ['entity.created', 'entity.exploded'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('entity.exploded');
    expect(unknown.body.error.details).toEqual([
      { field: 'body.events.1', message: '"entity.exploded" is not an event kind' },
    ]);
    const badSecret = await t.call('POST', path, {
      url: 'https://x.example/h',
      events: ['entity.created'],
      secret: 'hunter2',
    });
    expect(badSecret.status).toBe(400);
    expect(badSecret.body.error.details[0].field).toBe('body.secret');
    const shortSecret = await t.call('POST', path, {
      url: 'https://x.example/h',
      events: ['entity.created'],
      secret: `whsec_${Buffer.from('short').toString('base64')}`,
    });
    expect(shortSecret.status).toBe(400);
    const ftp = await t.call('POST', path, { url: 'ftp://x.example/h', events: ['entity.created'] });
    expect(ftp.status).toBe(400);
    for (const url of ['http://127.0.0.1:9200/h', 'https://10.1.2.3/h', 'http://[::1]/h', 'http://169.254.169.254/']) {
      const privateUrl = await t.call('POST', path, { url, events: ['entity.created'] });
      expect([url, privateUrl.status, privateUrl.body.error.details[0].field]).toEqual([url, 400, 'body.url']);
      expect(privateUrl.body.error.message).toMatch(/^egress refused: .* \(allow it with SHIPYARD_EGRESS_ALLOW\)$/);
    }
    const id = await t.addWebhook('https://x.example/h');
    const put = await t.call('PUT', `/integrations/webhooks/${id}`, { events: ['nope'] });
    expect(put.status).toBe(400);
    expect((await t.call('PUT', `/integrations/webhooks/${id}`, { url: 'http://192.168.1.1/h' })).status).toBe(400);
    expect(
      (
        await t.call('POST', `/integrations/${randomUUID()}/webhooks`, {
          url: 'https://x.example/h',
          events: ['entity.created'],
        })
      ).status,
    ).toBe(404);
  });

  test("another tenant gets 404 on every webhook route of this tenant's, and changes nothing", async () => {
    const owner = await tenant();
    const hook = await receiver();
    const webhookId = await owner.addWebhook(hook.url);
    await owner.createEntity();
    const [delivery] = await owner.deliveriesWhen(webhookId, (list) => list[0]?.status === 'delivered');
    const other = await tenant();
    const attempts = [
      ['GET', `/integrations/${owner.integrationId}/webhooks`],
      [
        'POST',
        `/integrations/${owner.integrationId}/webhooks`,
        { url: 'https://x.example/h', events: ['entity.created'] },
      ],
      ['PUT', `/integrations/webhooks/${webhookId}`, { active: false }],
      ['GET', `/integrations/webhooks/${webhookId}/deliveries`],
      ['POST', `/integrations/webhooks/${webhookId}/deliveries/${delivery.id}/redeliver`],
      ['DELETE', `/integrations/webhooks/${webhookId}`],
    ] as const;
    for (const [method, path, body] of attempts) {
      expect([method, path, (await other.call(method, path, body)).status]).toEqual([method, path, 404]);
    }
    const listed = await owner.call('GET', `/integrations/${owner.integrationId}/webhooks`);
    expect(listed.body.webhooks).toEqual([expect.objectContaining({ id: webhookId, active: true })]);
    expect(await owner.deliveries(webhookId)).toHaveLength(1);
  });
});
