import { parse } from 'yaml';
import { bearer } from '../support/harness';
import { fullManifest, minimalManifest } from '../support/manifestFixtures';
import { useManifestsSuite } from '../support/manifestsSuite';

const { suite, call, uniqueId, send, changelog, outgoing } = useManifestsSuite();

test('a manifest creates its entity (source manifest) and its row; the same manifest again is an update that writes nothing', async () => {
  const id = uniqueId('pay');
  const first = await send('/manifests', fullManifest(id));
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({
    result: 'created',
    warnings: [],
    entity: { service_id: id, type: 'service', owner: 'team-payments', tier: 'tier1', source: 'manifest' },
    manifest: { service_id: id, manifest_type: 'shipyard', content: fullManifest(id) },
  });
  expect(first.body.manifest.entity_id).toBe(first.body.entity.id);
  const entries = await changelog(id);

  const again = await send('/manifests', fullManifest(id));
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ result: 'updated', entity: { id: first.body.entity.id } });
  expect(again.body.entity.updated_at).toBe(first.body.entity.updated_at);
  expect(again.body.manifest.updated_at).toBe(first.body.manifest.updated_at);
  expect(await changelog(id)).toEqual(entries);
});

test('a manifest states the whole entity: a field it no longer has is cleared, and each change is a changelog entry', async () => {
  const id = uniqueId('pay');
  expect((await send('/manifests', fullManifest(id))).status).toBe(200);
  const res = await send('/manifests', minimalManifest(id).replace(`name: ${id}`, `name: ${id}\n  service_id: ${id}`));
  expect(res.body).toMatchObject({
    result: 'updated',
    entity: { owner: null, lifecycle: null, tier: null, description: null, tags: [], links: [] },
  });
  expect((await call(suite.adminA.token, 'GET', `/entities/${id}/readme`)).status).toBe(404);
  const fields = (await changelog(id)).filter((e) => e.action === 'updated').map((e) => e.field);
  expect(fields.sort()).toEqual(['description', 'lifecycle', 'links', 'name', 'owner', 'readme', 'tags', 'tier']);
});

test('an invalid manifest is a 400 naming each problem with its line and column, and writes nothing', async () => {
  const id = uniqueId('bad');
  const res = await send('/manifests', minimalManifest(id).replace('type: service', 'type: servise\n  colour: blue'));
  expect(res.status).toBe(400);
  expect(res.body.error.details).toEqual([
    { field: 'body.content.spec.type', message: expect.stringMatching(/^line 6, column 9: must be one of: service/) },
    { field: 'body.content.spec.colour', message: 'line 7, column 3: is not a field of this format' },
  ]);
  expect((await call(suite.adminA.token, 'GET', `/entities/${id}`)).status).toBe(404);
  const two = await send('/manifests', `${minimalManifest(id)}---\n${minimalManifest(uniqueId('b'))}`);
  expect(two.status).toBe(400);
  expect(two.body.error.message).toMatch(/2 documents.*import/);
});

test('a relation to an unknown entity is a 400 at the relation’s line; to a known one it is stored', async () => {
  const target = uniqueId('ledger');
  const id = uniqueId('pay');
  const relations = `  relations:\n    - type: depends_on\n      target: ${target}\n`;
  const unknown = await send('/manifests', fullManifest(id, { relations }));
  expect(unknown.status).toBe(400);
  expect(unknown.body.error.details).toEqual([
    {
      field: 'body.content.spec.relations[0].target',
      message: `line 21, column 15: no entity "${target}" in this tenant`,
    },
  ]);
  expect((await send('/manifests', minimalManifest(target))).status).toBe(200);
  expect((await send('/manifests', fullManifest(id, { relations }))).status).toBe(200);
  expect(await outgoing(id)).toEqual([`depends_on ${target}`]);
});

test('a manifest is read by id or by service_id, and listed by service_id in pages without its content', async () => {
  const prefix = uniqueId('list');
  const ids = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
  const made = [];
  for (const id of ids) made.push((await send('/manifests', minimalManifest(id))).body.manifest);
  const byId = await call(suite.viewerA.token, 'GET', `/manifests/${made[0].id}`);
  const byServiceId = await call(suite.viewerA.token, 'GET', `/manifests/${ids[0]}`);
  expect(byId).toEqual({ status: 200, body: made[0] });
  expect(byServiceId).toEqual(byId);

  const seen: string[] = [];
  let cursor = '';
  do {
    const page = await call(suite.viewerA.token, 'GET', `/manifests?limit=2&cursor=${cursor}`);
    expect(page.status).toBe(200);
    expect(page.body.manifests.length).toBeLessThanOrEqual(2);
    expect(page.body.manifests.every((m: object) => !('content' in m))).toBe(true);
    seen.push(...page.body.manifests.map((m: { service_id: string }) => m.service_id));
    cursor = page.body.next_cursor;
  } while (cursor);
  const mine = seen.filter((s) => s.startsWith(prefix));
  expect(mine).toEqual([...ids].sort());
  expect(seen).toEqual([...seen].sort());
  expect(new Set(seen).size).toBe(seen.length);
  const backstageOnly = await call(suite.viewerA.token, 'GET', '/manifests?manifest_type=backstage&limit=100');
  expect(backstageOnly.body.manifests.filter((m: { service_id: string }) => m.service_id.startsWith(prefix))).toEqual(
    [],
  );
});

test('PUT replaces a manifest and applies it; a document declaring another service_id is refused', async () => {
  const id = uniqueId('pay');
  const created = (await send('/manifests', minimalManifest(id))).body;
  // No service_id in the document: the manifest's own is kept, even with a new name.
  const renamed = minimalManifest(id).replace(`name: ${id}`, 'name: Payments').replace('type: service', 'type: api');
  const res = await call(suite.editorA.token, 'PUT', `/manifests/${created.manifest.id}`, { content: renamed });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    result: 'updated',
    entity: { id: created.entity.id, service_id: id, name: 'Payments', type: 'api' },
    manifest: { id: created.manifest.id, content: renamed },
  });
  const other = minimalManifest(id).replace(`name: ${id}`, `name: x\n  service_id: ${id}-other`);
  const refused = await call(suite.editorA.token, 'PUT', `/manifests/${id}`, { content: other });
  expect(refused.status).toBe(400);
  expect(refused.body.error.details).toEqual([
    { field: 'body.content.metadata.service_id', message: expect.stringMatching(/^line 5, column 15: is ".*-other"/) },
  ]);
  expect((await call(suite.editorA.token, 'PUT', `/manifests/${id}-none`, { content: other })).status).toBe(404);
});

test('DELETE removes the manifest and the entity it declares; a second DELETE is a 404', async () => {
  const id = uniqueId('gone');
  const created = (await send('/manifests', minimalManifest(id))).body;
  expect((await call(suite.adminA.token, 'DELETE', `/manifests/${id}`)).status).toBe(204);
  expect((await call(suite.adminA.token, 'GET', `/manifests/${created.manifest.id}`)).status).toBe(404);
  expect((await call(suite.adminA.token, 'GET', `/entities/${created.entity.id}`)).status).toBe(404);
  expect((await call(suite.adminA.token, 'DELETE', `/manifests/${created.manifest.id}`)).status).toBe(404);
});

test('deleting the entity takes its manifest with it', async () => {
  const id = uniqueId('cascade');
  expect((await send('/manifests', minimalManifest(id))).status).toBe(200);
  expect((await call(suite.adminA.token, 'DELETE', `/entities/${id}`)).status).toBe(204);
  expect((await call(suite.adminA.token, 'GET', `/manifests/${id}`)).status).toBe(404);
});

test('scopes: catalog:read lists and reads, catalog:write creates and updates, only catalog:admin deletes', async () => {
  const id = uniqueId('scoped');
  const viewer = suite.viewerA.token;
  expect((await send('/manifests', minimalManifest(id), {}, viewer)).status).toBe(403);
  expect((await send('/manifests/import', minimalManifest(id), {}, viewer)).status).toBe(403);
  expect((await send('/manifests', minimalManifest(id))).status).toBe(200);
  expect((await call(viewer, 'GET', '/manifests')).status).toBe(200);
  expect((await call(viewer, 'GET', `/manifests/${id}`)).status).toBe(200);
  expect((await call(viewer, 'PUT', `/manifests/${id}`, { content: minimalManifest(id) })).status).toBe(403);
  expect((await send('/manifests/validate', minimalManifest(id), {}, viewer)).status).toBe(200);
  expect((await call(suite.editorA.token, 'DELETE', `/manifests/${id}`)).status).toBe(403);
  expect((await call(suite.adminA.token, 'DELETE', `/manifests/${id}`)).status).toBe(204);
});

test('tenant B cannot get, list, update or delete tenant A’s manifests, nor read its entity’s manifest', async () => {
  const id = uniqueId('private');
  const created = (await send('/manifests', minimalManifest(id))).body;
  const b = suite.adminB.token;
  expect((await call(b, 'GET', `/manifests/${created.manifest.id}`)).status).toBe(404);
  expect((await call(b, 'GET', `/manifests/${id}`)).status).toBe(404);
  const list = await call(b, 'GET', '/manifests?limit=100');
  expect(list.body.manifests).toEqual([]);
  expect((await call(b, 'PUT', `/manifests/${id}`, { content: minimalManifest(id) })).status).toBe(404);
  expect((await call(b, 'DELETE', `/manifests/${created.manifest.id}`)).status).toBe(404);
  expect((await fetch(`${suite.api.url}/api/v1/entities/${id}/manifest`, { headers: bearer(b) })).status).toBe(404);
  // The same service_id in B is B's own entity.
  expect((await send('/manifests', minimalManifest(id), {}, b)).body.result).toBe('created');
  expect((await call(suite.adminA.token, 'GET', `/manifests/${id}`)).body.id).toBe(created.manifest.id);
});

test('GET /entities/{id}/manifest is YAML that reads back as the entity, for any entity', async () => {
  const target = uniqueId('ledger');
  const id = uniqueId('pay');
  expect((await send('/manifests', minimalManifest(target))).status).toBe(200);
  const relations = `  relations:\n    - {type: depends_on, target: ${target}}\n`;
  const entity = (await send('/manifests', fullManifest(id, { relations }))).body.entity;
  const res = await fetch(`${suite.api.url}/api/v1/entities/${entity.id}/manifest`, {
    headers: bearer(suite.viewerA.token),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
  const manifest = parse(await res.text());
  const readme = await call(suite.viewerA.token, 'GET', `/entities/${id}/readme`);
  expect(manifest).toEqual({
    apiVersion: 'shipyard.dev/v1',
    kind: 'Entity',
    metadata: {
      name: entity.name,
      service_id: id,
      description: entity.description,
      tags: entity.tags,
      links: entity.links,
    },
    spec: {
      type: entity.type,
      lifecycle: entity.lifecycle,
      owner: entity.owner,
      tier: entity.tier,
      relations: [{ type: 'depends_on', target }],
      readme: readme.body,
    },
  });
  // An entity written through the API has a manifest too: applying it changes only the source.
  const plain = await call(suite.editorA.token, 'POST', '/entities', {
    name: uniqueId('plain'),
    type: 'tool',
    owner: 'team-tools',
    tags: ['cli'],
  });
  const text = await (
    await fetch(`${suite.api.url}/api/v1/entities/${plain.body.id}/manifest`, { headers: bearer(suite.viewerA.token) })
  ).text();
  const applied = await send('/manifests', text);
  expect(applied.body).toMatchObject({
    result: 'updated',
    entity: { ...plain.body, source: 'manifest', updated_at: expect.any(String), last_activity_at: expect.any(String) },
  });
  const updates = (await changelog(plain.body.id)).filter((entry) => entry.action === 'updated');
  expect(updates.map((entry) => [entry.field, entry.new_value])).toEqual([['source', 'manifest']]);
  expect(
    (await fetch(`${suite.api.url}/api/v1/entities/no-such-entity/manifest`, { headers: bearer(suite.viewerA.token) }))
      .status,
  ).toBe(404);
});
