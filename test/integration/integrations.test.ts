import { randomBytes, randomUUID } from 'node:crypto';
import knex from 'knex';
import { Keyring, parseEncryptionKeys } from '../../core/crypto/keyring';
import { openSecrets } from '../../core/crypto/secretConfig';
import { migrationConfigFor } from '../../core/migrations';
import * as sealMigration from '../../db/migrations/20261123000300_seal_integration_secrets';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { startFakeSourceHost } from '../support/fakeSourceHost';
import { callApi, sessionToken, startApi, startWorkers, testConfig, testDeps, type TestApi } from '../support/harness';
import { until } from '../support/processes';

// Integrations over real HTTP: typed config rules, write-only secrets (sealed at rest, masked
// whatever their case or depth), permissions, audit entries and tenant isolation. (Their wider
// use by forge actions is in forge.test.ts.)

const run = randomUUID().slice(0, 8);
let api: TestApi;
let admin: string;
let adminTenantId: string;
let viewer: string;
let otherTenant: string;
/** The system role, to read rows as they are stored. */
const system = createPool(testConfig().database.systemUrl, 1);
beforeAll(async () => {
  api = await startApi();
  ({ token: admin, tenantId: adminTenantId } = await sessionToken({
    tenant: `integrations-${run}`,
    email: 'admin@int.test',
    roles: ['admin'],
  }));
  viewer = (await sessionToken({ tenant: `integrations-${run}`, email: 'viewer@int.test', roles: ['viewer'] })).token;
  otherTenant = (
    await sessionToken({ tenant: `integrations-other-${run}`, email: 'admin@other.test', roles: ['admin'] })
  ).token;
});
afterAll(async () => {
  await api.close();
  await system.destroy();
});

const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
const sourceHost = {
  name: 'source host',
  type: 'vcs-host-a',
  config: { base_url: 'https://vcs.example.test/api', token: 'tok-secret', organization: 'acme' },
};

test('a vcs-host-a config needs base_url and token; unknown types and fields are 400s with details', async () => {
  const missing = await call(admin, 'POST', '/integrations', {
    name: 'x',
    type: 'vcs-host-a',
    config: { base_url: 'ftp://nope' },
  });
  expect(missing.status).toBe(400);
  expect(missing.body.error.details.map((d: { field: string }) => d.field)).toEqual(
    expect.arrayContaining(['body.config.token', 'body.config.base_url']),
  );
  const badType = await call(admin, 'POST', '/integrations', { name: 'x', type: 'pager', config: {} });
  expect(badType.status).toBe(400);
  expect((await call(admin, 'POST', '/integrations', { name: 'x', type: 'custom', config: {}, extra: 1 })).status).toBe(
    400,
  );
  // Types without config rules take any object.
  expect(
    (await call(admin, 'POST', '/integrations', { name: 'hooks', type: 'custom', config: { anything: true } })).status,
  ).toBe(201);
});

test('secret config values are stored but never returned; an update without them keeps them', async () => {
  const created = await call(admin, 'POST', '/integrations', sourceHost);
  expect(created.status).toBe(201);
  expect(created.body).toEqual(
    expect.objectContaining({
      type: 'vcs-host-a',
      status: 'active',
      config: { base_url: 'https://vcs.example.test/api', organization: 'acme' },
      secrets: ['token'],
      last_sync: null,
    }),
  );
  const listed = await call(admin, 'GET', '/integrations');
  expect(JSON.stringify(listed.body)).not.toContain('tok-secret');
  expect(listed.body.integrations.map((i: { id: string }) => i.id)).toContain(created.body.id);

  const renamed = await call(admin, 'PUT', `/integrations/${created.body.id}`, {
    name: 'renamed',
    status: 'inactive',
    config: { base_url: 'https://vcs.example.test/api' },
  });
  expect(renamed.status).toBe(200);
  expect(renamed.body).toEqual(
    expect.objectContaining({
      name: 'renamed',
      status: 'inactive',
      config: { base_url: 'https://vcs.example.test/api' },
      secrets: ['token'],
    }),
  );
  // A replacement config is still checked against its type's rules.
  const broken = await call(admin, 'PUT', `/integrations/${created.body.id}`, { config: { organization: 'acme' } });
  expect(broken.status).toBe(400);
  expect(broken.body.error.details).toEqual([expect.objectContaining({ field: 'body.config.base_url' })]);
  expect((await call(admin, 'GET', `/integrations/${created.body.id}`)).body.config).toEqual({
    base_url: 'https://vcs.example.test/api',
  });
});

test('reading needs admin:read, changing needs admin:write; every change is audited', async () => {
  expect((await call(viewer, 'GET', '/integrations')).status).toBe(403);
  expect((await call(viewer, 'POST', '/integrations', sourceHost)).status).toBe(403);
  const { body: created } = await call(admin, 'POST', '/integrations', sourceHost);
  await call(admin, 'PUT', `/integrations/${created.id}`, { name: 'changed' });
  expect((await call(admin, 'DELETE', `/integrations/${created.id}`)).status).toBe(204);
  expect((await call(admin, 'GET', `/integrations/${created.id}`)).status).toBe(404);
  expect((await call(admin, 'DELETE', `/integrations/${created.id}`)).status).toBe(404);
  const { items } = (await call(admin, 'GET', '/admin/activity?limit=100')).body;
  const events = items
    .filter((i: { targetId?: string }) => i.targetId === created.id)
    .map((i: { eventType: string }) => i.eventType);
  expect(events).toEqual(['integration.deleted', 'integration.updated', 'integration.created']);
});

test('another tenant gets 404 for every call on an integration, and an empty list', async () => {
  const { body: created } = await call(admin, 'POST', '/integrations', sourceHost);
  expect((await call(otherTenant, 'GET', `/integrations/${created.id}`)).status).toBe(404);
  expect((await call(otherTenant, 'PUT', `/integrations/${created.id}`, { name: 'mine' })).status).toBe(404);
  expect((await call(otherTenant, 'DELETE', `/integrations/${created.id}`)).status).toBe(404);
  expect((await call(otherTenant, 'GET', '/integrations')).body.integrations).toEqual([]);
  expect((await call(admin, 'GET', `/integrations/${created.id}`)).body.name).toBe('source host');
});

test('an id in the urn:uuid: form (valid for JSON Schema, refused by PostgreSQL) is a 400, not a database error', async () => {
  const { body: created } = await call(admin, 'POST', '/integrations', sourceHost);
  const res = await call(admin, 'GET', `/integrations/urn:uuid:${created.id}`);
  expect(res.status).toBe(400);
  expect(res.body.error.details[0].field).toBe('params.id');
});

const storedConfig = async (id: string) => (await system('integrations').where({ id }).first('config')).config;
const keyEntry = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('secrets', () => {
  test('the database row holds each secret sealed, naming its key, and never the token itself', async () => {
    const config = { ...sourceHost.config, auth: { username: 'bot', password: `pw-${run}` } };
    const { body: created } = await call(admin, 'POST', '/integrations', {
      name: 'sealed',
      type: 'vcs-host-a',
      config,
    });
    const stored = await storedConfig(created.id);
    expect(JSON.stringify(stored)).not.toMatch(new RegExp(`tok-secret|pw-${run}`));
    const sealed = new RegExp(`^sealed:v1:${api.deps.keyring.currentKeyId}:[A-Za-z0-9+/]+=*$`);
    expect(stored).toEqual({
      base_url: config.base_url,
      organization: 'acme',
      token: expect.stringMatching(sealed),
      auth: { username: 'bot', password: expect.stringMatching(sealed) },
    });
    expect(openSecrets(api.deps.keyring, stored, adminTenantId)).toEqual(config);
  });

  test('secret keys are masked whatever their case and at any depth, in responses and in what an update keeps', async () => {
    const config = {
      base_url: 'https://tool.example.test',
      Token: 'T-1',
      API_KEY: 'K-1',
      auth: { username: 'bot', password: 'P-1' },
    };
    const created = await call(admin, 'POST', '/integrations', { name: 'tool', type: 'custom', config });
    expect(created.body.config).toEqual({ base_url: 'https://tool.example.test', auth: { username: 'bot' } });
    expect(created.body.secrets.sort()).toEqual(['API_KEY', 'Token', 'auth.password']);
    const [listed, one] = await Promise.all([
      call(admin, 'GET', '/integrations'),
      call(admin, 'GET', `/integrations/${created.body.id}`),
    ]);
    const everything = JSON.stringify([listed.body, one.body]);
    for (const secret of ['T-1', 'K-1', 'P-1']) expect(everything).not.toContain(secret);

    // A client sends back what it read, with one change: every secret stays.
    const read = created.body.config;
    const sentBack = { ...read, auth: { ...read.auth, username: 'bot-2' } };
    const updated = await call(admin, 'PUT', `/integrations/${created.body.id}`, { config: sentBack });
    expect(updated.status).toBe(200);
    expect(updated.body.secrets.sort()).toEqual(['API_KEY', 'Token', 'auth.password']);
    const reopened = openSecrets(api.deps.keyring, await storedConfig(created.body.id), adminTenantId);
    expect(reopened).toEqual({ ...config, auth: { username: 'bot-2', password: 'P-1' } });
  });

  test('a new base_url without the token again is a 400; with it, 200, and the source-host action then calls the new host', async () => {
    const [oldHost, newHost] = await Promise.all([
      startFakeSourceHost(`old-${run}`),
      startFakeSourceHost(`new-${run}`),
    ]);
    const workers = await startWorkers(['forge']);
    try {
      newHost.repositories.add('acme/payments');
      const config = { base_url: oldHost.url, token: oldHost.token };
      const { body: created } = await call(admin, 'POST', '/integrations', {
        name: `moving-${run}`,
        type: 'vcs-host-a',
        config,
      });
      const moved = await call(admin, 'PUT', `/integrations/${created.id}`, { config: { base_url: newHost.url } });
      expect(moved.status).toBe(400);
      expect(moved.body.error.details).toEqual([
        { field: 'body.config.token', message: 'required when base_url changes' },
      ]);
      expect((await call(admin, 'GET', `/integrations/${created.id}`)).body.config).toEqual({ base_url: oldHost.url });

      const withToken = await call(admin, 'PUT', `/integrations/${created.id}`, {
        config: { base_url: newHost.url, token: newHost.token },
      });
      expect(withToken.body.config).toEqual({ base_url: newHost.url });
      expect(withToken.status).toBe(200);
      const slug = `ping-${run}`;
      await call(admin, 'POST', '/forge/molds', {
        slug,
        name: 'ping',
        actions: [
          {
            name: 'ping',
            type: 'vcs-host-a-action',
            config: { method: 'GET', path: '/repos/acme/payments', integration_id: created.id },
          },
        ],
      });
      const started = await call(admin, 'POST', '/forge/runs', { mold_slug: slug, parameters: {} });
      const done = await until('the run ends', 60, async () => {
        const { body } = await call(admin, 'GET', `/forge/runs/${started.body.id}`);
        return ['completed', 'failed'].includes(body.status) ? body : undefined;
      });
      expect(done.status).toBe('completed');
      const expected = { method: 'GET', path: '/repos/acme/payments', authorization: `Bearer ${newHost.token}` };
      expect(newHost.requests).toEqual([expect.objectContaining(expected)]);
      expect(oldHost.requests).toEqual([]);
    } finally {
      await workers.stop();
      await Promise.all([oldHost.close(), newHost.close()]);
    }
  }, 90_000);

  test('rotation: with a new key put first, secrets sealed with the old one still open; the next update re-seals with the new', async () => {
    const [oldKey, newKey] = [keyEntry(`old-${run}`), keyEntry(`new-${run}`)];
    const before = await startApi({ deps: await testDeps(testConfig({ encryptionKeys: oldKey })) });
    const after = await startApi({ deps: await testDeps(testConfig({ encryptionKeys: `${newKey},${oldKey}` })) });
    try {
      const { body: created } = await callApi(before, admin, 'POST', '/integrations', sourceHost);
      expect(await storedConfig(created.id)).toEqual(
        expect.objectContaining({ token: expect.stringMatching(`^sealed:v1:old-${run}:`) }),
      );
      const updated = await callApi(after, admin, 'PUT', `/integrations/${created.id}`, { config: created.config });
      expect(updated.status).toBe(200);
      const stored = await storedConfig(created.id);
      expect(stored.token).toMatch(new RegExp(`^sealed:v1:new-${run}:`));
      expect(openSecrets(new Keyring(parseEncryptionKeys(newKey)), stored, adminTenantId)).toEqual(sourceHost.config);
    } finally {
      await Promise.all([before.close(), after.close()]);
    }
  });

  test('a row stored before sealing (plain JSON) is read as before, and the migration seals it', async () => {
    const [row] = await withTenant(api.deps.db, adminTenantId, (trx) =>
      trx('integrations')
        .insert({ tenant_id: adminTenantId, name: 'legacy', type: 'vcs-host-a', config: sourceHost.config })
        .returning('id'),
    );
    const read = await call(admin, 'GET', `/integrations/${row.id}`);
    const masked = { config: { base_url: sourceHost.config.base_url, organization: 'acme' }, secrets: ['token'] };
    expect(read.body).toEqual(expect.objectContaining(masked));

    const owner = knex(migrationConfigFor(testConfig()));
    try {
      await owner.transaction((trx) => sealMigration.up(trx));
    } finally {
      await owner.destroy();
    }
    const stored = await storedConfig(row.id);
    expect(stored.token).toMatch(new RegExp(`^sealed:v1:${api.deps.keyring.currentKeyId}:`));
    expect(openSecrets(api.deps.keyring, stored, adminTenantId)).toEqual(sourceHost.config);
  });
});
