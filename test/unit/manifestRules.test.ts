import { readManifestDocuments as readWithLimits } from '../../core/manifests/manifestRules';
import { analyzeManifest, QUALITY_WEIGHTS } from '../../core/manifests/qualityRules';
import { fullManifest, minimalManifest } from '../support/manifestFixtures';
import { inputLimitsFrom } from '../../core/limitsConfig';
import type { ManifestType } from '../../core/catalog/types';

/** The default limits, as an unconfigured process has them. */
const LIMITS = inputLimitsFrom({});
const readManifestDocuments = (text: string, format?: ManifestType) => readWithLimits(text, format, LIMITS);

const readOne = (text: string, format?: 'shipyard' | 'backstage') => {
  const documents = readManifestDocuments(text, format);
  expect(documents).toHaveLength(1);
  return documents[0];
};

test('a complete manifest and a minimal one are accepted with no problems', () => {
  for (const text of [fullManifest('pay'), minimalManifest('pay')]) {
    expect(readOne(text)).toMatchObject({ outcome: 'accepted', format: 'shipyard', kind: 'Entity', problems: [] });
  }
});

test('every schema problem is reported with its path, line and column, in source order', () => {
  const text = `apiVersion: shipyard.dev/v2
kind: Entity
metadata:
  service_id: Not_A_Service_Id
  colour: blue
  tags: [a, a]
  links:
    - title: Repo
      url: not a url
spec:
  type: servise
  owner: 42
  lifecycle: live
  relations:
    - type: uses
      target: ledger
  readme: {content: "# x"}
`;
  const document = readOne(text);
  expect(document.outcome).toBe('rejected');
  expect(document.manifest).toBeUndefined();
  expect(document.problems.map(({ path, line, column }) => [path, line, column])).toEqual([
    ['apiVersion', 1, 13],
    ['metadata.name', 4, 3],
    ['metadata.service_id', 4, 15],
    ['metadata.colour', 5, 3],
    ['metadata.tags', 6, 9],
    ['metadata.links[0].url', 9, 12],
    ['spec.type', 11, 9],
    ['spec.owner', 12, 10],
    ['spec.lifecycle', 13, 14],
    ['spec.relations[0].type', 15, 13],
    ['spec.readme.format', 17, 11],
  ]);
  const messages = Object.fromEntries(document.problems.map((p) => [p.path, p.message]));
  expect(messages).toMatchObject({
    apiVersion: 'must be "shipyard.dev/v1"',
    'metadata.name': 'is required',
    'metadata.colour': 'is not a field of this format',
    'spec.type': expect.stringContaining('must be one of: service, library, api,'),
    'spec.owner': 'must be string',
    'spec.lifecycle': 'must be one of: experimental, development, production, deprecated',
  });
});

test('a document that is not a map, or lacks metadata and spec, is refused at its start', () => {
  expect(readOne('- just\n- a list\n').problems).toEqual([{ path: '', line: 1, column: 1, message: 'must be object' }]);
  expect(readOne('apiVersion: shipyard.dev/v1\nkind: Entity\n').problems.map((p) => p.path)).toEqual([
    'metadata',
    'spec',
  ]);
});

test('a service_id that looks like a uuid, or a name no service_id derives from, is refused', () => {
  const uuidLike = minimalManifest('pay').replace(
    '  name: pay\n',
    '  name: pay\n  service_id: 3f0c1f4e-8a7b-4d5e-9f00-112233445566\n',
  );
  expect(readOne(uuidLike).problems).toEqual([
    { path: 'metadata.service_id', line: 5, column: 15, message: 'must not look like a uuid' },
  ]);
  expect(readOne(minimalManifest('pay').replace('name: pay', 'name: "!!!"')).problems).toEqual([
    { path: 'metadata.name', line: 4, column: 9, message: expect.stringMatching(/add metadata.service_id/) },
  ]);
});

test('the format is the one asked for, else Backstage’s for backstage.io apiVersions, else ours', () => {
  const backstage =
    'apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: web}\nspec: {type: website}\n';
  expect(readOne(backstage)).toMatchObject({ format: 'backstage', outcome: 'accepted' });
  expect(readOne(backstage, 'shipyard')).toMatchObject({ format: 'shipyard', outcome: 'rejected' });
  expect(readOne(minimalManifest('pay'), 'backstage')).toMatchObject({ format: 'backstage', outcome: 'skipped' });
  expect(readOne('apiVersion: other/v1\nkind: Entity\n')).toMatchObject({ format: 'shipyard', outcome: 'rejected' });
});

test('a complete manifest scores 100, with every check ok', () => {
  const document = readOne(fullManifest('pay'));
  const report = analyzeManifest(document.draft, document.problems);
  expect(report.score).toBe(100);
  expect(report.checks.every((check) => check.status === 'ok' && check.points === check.weight)).toBe(true);
  expect(report).toMatchObject({ missing: [], weak: [] });
  expect(Object.values(QUALITY_WEIGHTS).reduce((a, b) => a + b, 0)).toBe(100);
});

test('a minimal manifest scores 0 and names every missing field', () => {
  const document = readOne(minimalManifest('pay'));
  const report = analyzeManifest(document.draft, document.problems);
  expect(report).toMatchObject({
    score: 0,
    missing: ['owner', 'description', 'lifecycle', 'tier', 'links', 'readme'],
    weak: [],
  });
});

test('a short description, one link and a short README are weak and earn half their weight', () => {
  const text = `${minimalManifest('pay').replace('  name: pay\n', '  name: pay\n  description: Pays\n  links: [{title: Repo, url: "https://git.example.com/pay"}]\n')}  owner: team-payments
  readme: "# Pay"
`;
  const document = readOne(text);
  const report = analyzeManifest(document.draft, document.problems);
  expect(report.weak).toEqual(['description', 'links', 'readme']);
  expect(report.missing).toEqual(['lifecycle', 'tier']);
  expect(report.score).toBe(25 + 10 + 7 + 7);
  const description = report.checks.find((check) => check.field === 'description');
  expect(description).toMatchObject({ status: 'weak', points: 10, message: expect.stringMatching(/4 characters/) });
});

test('a description that repeats the name is weak; an invalid field earns nothing and says why', () => {
  const text = minimalManifest('pay')
    .replace('  name: pay\n', '  name: Pay\n  description: pay\n')
    .replace('  type: service\n', '  type: service\n  lifecycle: live\n  owner: team-payments\n');
  const document = readOne(text);
  const report = analyzeManifest(document.draft, document.problems);
  expect(report.checks.find((c) => c.field === 'description')).toMatchObject({
    status: 'weak',
    message: 'the description repeats the name',
  });
  expect(report.checks.find((c) => c.field === 'lifecycle')).toMatchObject({
    status: 'invalid',
    points: 0,
    message: expect.stringMatching(/^spec.lifecycle: must be one of/),
  });
  expect(report.score).toBe(25 + 10);
});

test('a NUL character, which YAML escapes can write and PostgreSQL cannot store, is a problem at its place', () => {
  const text = minimalManifest('pay').replace('name: pay', 'name: "pay\\0"\n  tags: ["a\\0"]');
  expect(readOne(text).problems).toEqual([
    { path: 'metadata.name', line: 4, column: 9, message: 'must not contain the NUL character' },
    { path: 'metadata.tags[0]', line: 5, column: 10, message: 'must not contain the NUL character' },
  ]);
});

test('problems are listed up to the budget per document, then counted; each message is clipped', () => {
  const unknown = Array.from({ length: LIMITS.notesPerDocument + 10 }, (_, i) => `  extra${i}: 1\n`).join('');
  const [document] = readManifestDocuments(minimalManifest('pay').replace('spec:\n', `spec:\n${unknown}`));
  expect(document.problems).toHaveLength(LIMITS.notesPerDocument + 1);
  expect(document.problems[LIMITS.notesPerDocument]).toMatchObject({
    path: '',
    message: `10 more problems not listed (SHIPYARD_MANIFEST_MAX_NOTES is ${LIMITS.notesPerDocument})`,
  });
  const [long] = readManifestDocuments(
    `apiVersion: backstage.io/v1alpha1\nkind: ${'K'.repeat(5_000)}\nmetadata: {name: x}\n`,
  );
  expect(long.warnings).toEqual([{ path: 'kind', line: 2, column: 7, message: expect.stringMatching(/^kind "K+…$/) }]);
  expect(long.warnings[0].message).toHaveLength(501);
});
