import { parse, parseAllDocuments } from 'yaml';
import { withTenant } from '../../db/tenancy';
import { backstageDescriptor, fullManifest, minimalManifest } from '../support/manifestFixtures';
import { useManifestsSuite } from '../support/manifestsSuite';

const { suite, call, uniqueId, send, changelog, outgoing } = useManifestsSuite();

const withRelations = (id: string, ...targets: string[]) =>
  `${minimalManifest(id)}  relations:\n${targets.map((t) => `    - {type: depends_on, target: ${t}}\n`).join('')}`;

const exists = async (ref: string) => (await call(suite.adminA.token, 'GET', `/entities/${ref}`)).status === 200;

test('validate reports each document’s problems with line and column, and stores nothing', async () => {
  const good = uniqueId('good');
  const bad = uniqueId('bad');
  const res = await send('/manifests/validate', `${minimalManifest(good)}---\n${minimalManifest(bad, 'servise')}`);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    valid: false,
    documents: [
      {
        index: 0,
        line: 1,
        format: 'shipyard',
        kind: 'Entity',
        service_id: good,
        outcome: 'accepted',
        problems: [],
        warnings: [],
      },
      {
        index: 1,
        line: 8,
        format: 'shipyard',
        kind: 'Entity',
        service_id: bad,
        outcome: 'rejected',
        problems: [{ path: 'spec.type', line: 13, column: 9, message: expect.stringMatching(/^must be one of/) }],
        warnings: [],
      },
    ],
  });
  expect((await send('/manifests/validate', minimalManifest(good))).body.valid).toBe(true);
  expect(await exists(good)).toBe(false);
  expect((await call(suite.adminA.token, 'GET', `/manifests/${good}`)).status).toBe(404);
});

test('a YAML syntax error is a problem with its line and column, not a 400 or a 500', async () => {
  const res = await send('/manifests/validate', 'metadata:\n  name: [x\nspec: {}\n');
  expect(res.status).toBe(200);
  expect(res.body.documents[0]).toMatchObject({ outcome: 'rejected', problems: [{ path: '', line: 3, column: 1 }] });
});

test('analyze scores every document and names what is missing or weak; an unreadable one has no score', async () => {
  const content = [
    fullManifest(uniqueId('full')),
    minimalManifest(uniqueId('min')),
    'apiVersion: backstage.io/v1alpha1\nkind: API\nmetadata: {name: x, description: Short}\nspec: {owner: team-a, lifecycle: production}\n',
    'a: [\n',
  ].join('---\n');
  const res = await send('/manifests/analyze', content, {}, suite.viewerA.token);
  expect(res.status).toBe(200);
  const [full, minimal, backstage, broken] = res.body.documents;
  expect(full).toMatchObject({ score: 100, missing: [], weak: [] });
  expect(minimal).toMatchObject({
    score: 0,
    missing: ['owner', 'description', 'lifecycle', 'tier', 'links', 'readme'],
  });
  expect(backstage).toMatchObject({
    format: 'backstage',
    score: 25 + 10 + 15,
    missing: ['tier', 'links', 'readme'],
    weak: ['description'],
  });
  // Lines count from the start of the stream.
  expect(broken).toMatchObject({ score: null, checks: [], problems: [{ line: broken.line + 1 }] });
});

test('convert turns a Backstage descriptor into our manifests with warnings, stores nothing, and its content reads back', async () => {
  const prefix = uniqueId('cv');
  const res = await send('/manifests/convert', backstageDescriptor(prefix), {}, suite.viewerA.token);
  expect(res.status).toBe(200);
  const documents = res.body.documents as { kind: string; outcome: string; warnings: unknown[]; manifest: unknown }[];
  expect(documents.map((d) => [d.kind, d.outcome, d.warnings.length])).toEqual([
    ['Component', 'accepted', 5],
    ['API', 'accepted', 2],
    ['API', 'accepted', 0],
    ['System', 'accepted', 1],
    ['Resource', 'accepted', 2],
    ['Group', 'skipped', 1],
    ['Location', 'skipped', 1],
  ]);
  const converted = parseAllDocuments(res.body.content).map((doc) => doc.toJS());
  expect(converted).toEqual(documents.filter((d) => d.manifest).map((d) => d.manifest));
  expect(converted[0]).toMatchObject({ metadata: { service_id: `${prefix}-web` }, spec: { type: 'website' } });
  expect(await exists(`${prefix}-web`)).toBe(false);
  const valid = await send('/manifests/validate', res.body.content, { format: 'shipyard' });
  expect(valid.body.valid).toBe(true);
});

test('convert escapes the control characters a descriptor carries, so strict YAML readers accept its content', async () => {
  // JSON-escaped in the request: C1 controls (NEL among them) and a line separator in a title.
  const title = 'Pay\u0085ments \u009b2J\u2028desk';
  const descriptor = `apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: ${uniqueId('cc')}, title: "${title}"}\nspec: {type: service}\n`;
  const res = await send('/manifests/convert', descriptor, {}, suite.viewerA.token);
  expect(res.status).toBe(200);
  expect(res.body.content).not.toMatch(/[\x7f-\x9f\u2028\u2029]/);
  expect(res.body.content).toContain('name: "Pay\\Nments \\x9b2J\\Ldesk"');
  expect(parse(res.body.content, { version: '1.1' })).toEqual(res.body.documents[0].manifest);
  expect(res.body.documents[0].manifest.metadata.name).toBe('Pay\u0085ments \u009b2J\u2028desk');
});

test('an import of a Backstage descriptor with a bad document applies the others, relations in any order, and reports each', async () => {
  const prefix = uniqueId('bs');
  const bad = `apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: ${prefix}-bad}\nspec: {type: service, owner: 42}\n`;
  const res = await send('/manifests/import', `${backstageDescriptor(prefix)}---\n${bad}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ created: 5, updated: 0, skipped: 2, rejected: 1 });
  const results = res.body.documents.map((d: { service_id: string | null; result: string }) => [
    d.service_id,
    d.result,
  ]);
  expect(results).toEqual([
    [`${prefix}-web`, 'created'],
    [`${prefix}-api`, 'created'],
    [`${prefix}-search-api`, 'created'],
    [`${prefix}-portal`, 'created'],
    [`${prefix}-db`, 'created'],
    [null, 'skipped'],
    [null, 'skipped'],
    [`${prefix}-bad`, 'rejected'],
  ]);
  expect(res.body.documents[7]).toMatchObject({
    entity_id: null,
    manifest_id: null,
    // The fourth line of the document.
    problems: [
      { path: 'spec.owner', line: res.body.documents[7].line + 3, message: expect.stringMatching(/entity reference/) },
    ],
  });
  expect(res.body.documents[0].warnings).toHaveLength(5);
  // The Component, first in the stream, relates to entities declared after it.
  expect(await outgoing(`${prefix}-web`)).toEqual([
    `consumes_api ${prefix}-search-api`,
    `depends_on ${prefix}-db`,
    `part_of ${prefix}-portal`,
    `provides_api ${prefix}-api`,
  ]);
  expect(await exists(`${prefix}-bad`)).toBe(false);
  const web = await call(suite.viewerA.token, 'GET', `/manifests/${prefix}-web`);
  expect(web.body).toMatchObject({ manifest_type: 'backstage', entity_id: res.body.documents[0].entity_id });
  expect(parse(web.body.content)).toMatchObject({ kind: 'Component', metadata: { name: `${prefix}-web` } });
  const listed = await call(suite.viewerA.token, 'GET', '/entities?manifestType=backstage&limit=100');
  expect(listed.body.entities.map((e: { service_id: string }) => e.service_id).sort()).toEqual(
    ['api', 'db', 'portal', 'search-api', 'web'].map((s) => `${prefix}-${s}`),
  );

  const entries = await changelog(`${prefix}-web`);
  const again = await send('/manifests/import', backstageDescriptor(prefix));
  expect(again.body).toMatchObject({ created: 0, updated: 5, skipped: 2, rejected: 0 });
  expect(await changelog(`${prefix}-web`)).toEqual(entries);
});

test('relations between documents of our format resolve in whatever order the documents come', async () => {
  const [a, b, c] = ['a', 'b', 'c'].map((name) => uniqueId(name));
  // a → b → c, declared first to last, and a cycle back from c to a.
  const content = [withRelations(a, b), withRelations(b, c, a), withRelations(c, a)].join('---\n');
  const res = await send('/manifests/import', content);
  expect(res.body).toMatchObject({ created: 3, rejected: 0 });
  expect(await outgoing(a)).toEqual([`depends_on ${b}`]);
  expect(await outgoing(b)).toEqual([`depends_on ${a}`, `depends_on ${c}`].sort());
  expect(await outgoing(c)).toEqual([`depends_on ${a}`]);
});

test('a document whose relation names a rejected or unknown entity is rejected and leaves nothing, the rest apply', async () => {
  const [needsBad, bad, needsNothing, needsUnknown, alone] = ['x', 'bad', 'none', 'y', 'alone'].map((n) => uniqueId(n));
  const content = [
    withRelations(needsBad, bad),
    minimalManifest(bad, 'servise'),
    withRelations(needsUnknown, `${needsNothing}-missing`),
    withRelations(alone, needsBad),
    minimalManifest(needsNothing),
    minimalManifest(needsNothing),
  ].join('---\n');
  const res = await send('/manifests/import', content);
  expect(res.status).toBe(200);
  const byResult = res.body.documents.map((d: { service_id: string; result: string }) => `${d.service_id} ${d.result}`);
  expect(byResult).toEqual([
    `${needsBad} rejected`,
    `${bad} rejected`,
    `${needsUnknown} rejected`,
    // It needed an entity of this import that was rejected.
    `${alone} rejected`,
    `${needsNothing} created`,
    `${needsNothing} rejected`,
  ]);
  expect(res.body.documents[0].problems).toEqual([
    { path: 'spec.relations[0].target', line: 8, column: 34, message: `no entity "${bad}" in this tenant` },
  ]);
  expect(res.body.documents[5].problems[0].message).toMatch(/declared by document 4/);
  for (const ref of [needsBad, bad, needsUnknown, alone]) expect(await exists(ref)).toBe(false);
  expect((await call(suite.adminA.token, 'GET', `/manifests/${needsBad}`)).status).toBe(404);
  expect(await exists(needsNothing)).toBe(true);
});

test('an import relates only to entities of the caller’s tenant', async () => {
  const inA = uniqueId('in-a');
  expect((await send('/manifests', minimalManifest(inA))).status).toBe(200);
  const fromB = uniqueId('from-b');
  const res = await send('/manifests/import', withRelations(fromB, inA), {}, suite.adminB.token);
  expect(res.body).toMatchObject({ created: 0, rejected: 1 });
  expect(res.body.documents[0].problems[0].message).toBe(`no entity "${inA}" in this tenant`);
  expect((await call(suite.adminB.token, 'GET', `/entities/${fromB}`)).status).toBe(404);
});

test('an import holds at most 500 documents; the body is bounded', async () => {
  const many = Array.from({ length: 501 }, (_, i) => minimalManifest(`many-${i}`)).join('---\n');
  const res = await send('/manifests/import', many);
  expect(res.status).toBe(400);
  expect(res.body.error.details).toEqual([{ field: 'body.content', message: 'must hold at most 500 documents' }]);
  expect((await send('/manifests/import', '')).status).toBe(400);
  expect((await send('/manifests/import', minimalManifest('x'), { format: 'helm' })).status).toBe(400);
  expect((await send('/manifests/import', 'x'.repeat(1_000_001))).status).toBe(400);
  expect((await send('/manifests/import', 'x'.repeat(1_100_000))).status).toBe(413);
});

test('an import of 500 chained documents applies in one pass: every relation is stored, and a chain ending on nothing is rejected whole', async () => {
  const chain = (prefix: string, last: string) =>
    Array.from({ length: 500 }, (_, i) => withRelations(`${prefix}-${i}`, i < 499 ? `${prefix}-${i + 1}` : last)).join(
      '---\n',
    );
  const held = uniqueId('held');
  expect((await send('/manifests', minimalManifest(held))).status).toBe(200);
  const stored = uniqueId('chain');
  const res = await send('/manifests/import', chain(stored, held));
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ created: 500, rejected: 0 });
  expect(await outgoing(`${stored}-0`)).toEqual([`depends_on ${stored}-1`]);
  expect(await outgoing(`${stored}-499`)).toEqual([`depends_on ${held}`]);
  const relations = await withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
    trx('entity_relations as r')
      .join('entities as e', 'e.id', 'r.from_entity_id')
      .where('e.service_id', 'like', `${stored}-%`)
      .count<{ count: string }[]>('* as count'),
  );
  expect(Number(relations[0].count)).toBe(500);

  // Each document needs the next; the last names nothing: rejections travel back along the chain.
  const broken = uniqueId('broken');
  const refused = await send('/manifests/import', chain(broken, `${broken}-missing`));
  expect(refused.status).toBe(200);
  expect(refused.body).toMatchObject({ created: 0, rejected: 500 });
  expect(refused.body.documents[499].problems[0].message).toBe(`no entity "${broken}-missing" in this tenant`);
  expect(refused.body.documents[0].problems[0].message).toBe(`no entity "${broken}-1" in this tenant`);
  expect(await exists(`${broken}-0`)).toBe(false);
}, 120_000);
