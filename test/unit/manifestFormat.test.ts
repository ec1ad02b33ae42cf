import { parse, parseAllDocuments } from 'yaml';
import type { EntityView } from '../../core/catalog/types';
import type { ApiError } from '../../core/errors';
import {
  entityInputOf,
  manifestOfEntity,
  parseYamlStream as parseWithLimits,
  renderYaml,
} from '../../core/manifests/format';
import { documentsIn, tooDeepAt } from '../../core/manifests/streamScan';
import { readManifestDocuments as readWithLimits } from '../../core/manifests/manifestRules';
import type { Manifest } from '../../core/manifests/types';
import { fullManifest, minimalManifest } from '../support/manifestFixtures';
import { inputLimitsFrom } from '../../core/limitsConfig';
import type { ManifestType } from '../../core/catalog/types';

/** The default limits, as an unconfigured process has them. */
const LIMITS = inputLimitsFrom({});
const readManifestDocuments = (text: string, format?: ManifestType) => readWithLimits(text, format, LIMITS);
const parseYamlStream = (text: string) => parseWithLimits(text, LIMITS);

test('a stream is read document by document, each with its first line, its own source and no empty documents', () => {
  const text = `# leading comment\n${minimalManifest('one')}---\n${minimalManifest('two')}---\n`;
  const documents = parseYamlStream(text);
  expect(documents.map((d) => [d.index, d.line])).toEqual([
    [0, 2],
    [1, 9],
  ]);
  expect(documents[1].source).toBe(`---\n${minimalManifest('two')}`);
  expect(parse(documents[1].source)).toMatchObject({ metadata: { name: 'two' } });
  expect(parseYamlStream('# only a comment\n')).toEqual([]);
});

test('a syntax error is reported with its line and column, and leaves the other documents readable', () => {
  const text = ['a: [1, 2', 'b: c', '---', 'kind: x', '  y: 1', '---', 'name: ok', '---', 'q: "open'].join('\n');
  const documents = parseYamlStream(text);
  expect(documents.map((d) => d.problems.map(({ line, column }) => [line, column]))).toEqual([
    [[2, 1]],
    [
      [4, 7],
      [4, 7],
    ],
    [],
    // The closing quote is missing where the line ends.
    [[9, 9]],
  ]);
  expect(documents[0].problems[0].message).toMatch(/flow sequence/i);
  expect(documents[3].problems[0].message).toMatch(/quote/i);
  expect(documents[2].value).toEqual({ name: 'ok' });
});

test('duplicate keys, aliases to no anchor and collection keys are problems of their document, not crashes', () => {
  const [duplicate, alias, collectionKey] = parseYamlStream(
    ['a: 1', 'a: 2', '---', 'b: *nowhere', '---', '? [x, y]', ': 1'].join('\n'),
  );
  expect(duplicate.problems).toEqual([{ path: '', line: 2, column: 1, message: expect.stringMatching(/unique/) }]);
  expect(alias.problems).toEqual([{ path: '', line: 4, column: 1, message: expect.stringMatching(/alias/i) }]);
  expect(collectionKey.problems).toEqual([{ path: '', line: 6, column: 3, message: 'a key must be a plain string' }]);
});

test('an alias flood, a self-referencing alias or a wide map refuses the whole stream as a 400 naming the limit', () => {
  const flood = [
    'a: &a [x, x, x, x, x, x, x, x, x, x]',
    ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdef'[i]}`).join(', ')}]`),
  ].join('\n');
  const wide = Array.from({ length: LIMITS.keysPerMap + 1 }, (_, i) => `k${i}: 1`).join('\n');
  const refusal = (text: string) => {
    try {
      parseYamlStream(`a: ok\n---\n${text}`);
    } catch (err) {
      return { status: (err as ApiError).status, message: (err as ApiError).message };
    }
    throw new Error('not refused');
  };
  expect(refusal(flood)).toEqual({
    status: 400,
    message: expect.stringMatching(/^content document 1 .*SHIPYARD_MANIFEST_MAX_NODES/),
  });
  expect(refusal('tags: &t [*t]')).toEqual({
    status: 400,
    message: expect.stringMatching(/alias \*t refers to its own anchor/),
  });
  expect(refusal(wide)).toEqual({ status: 400, message: expect.stringMatching(/SHIPYARD_MANIFEST_MAX_KEYS/) });
});

test('a stream of more documents than allowed is refused before it is parsed; empty ones and comments do not count', () => {
  expect(documentsIn('---\n# c\n---\na: 1\n...\n---\nb: 2\n--- c\n')).toBe(3);
  const many = Array.from({ length: LIMITS.documents + 1 }, (_, i) => `i: ${i}`).join('\n---\n');
  expect(() => parseYamlStream(many)).toThrow(/SHIPYARD_MANIFEST_MAX_DOCUMENTS/);
});

test('locate points at the value, or at the key when asked, and stops at the nearest node that exists', () => {
  const [document] = parseYamlStream(minimalManifest('pay').replace('spec:\n', 'spec:\n  owner:\n'));
  expect(document.locate(['spec', 'type'])).toEqual({ line: 7, column: 9 });
  expect(document.locate(['spec', 'type'], 'key')).toEqual({ line: 7, column: 3 });
  // `owner:` with no value is located at its key.
  expect(document.locate(['spec', 'owner'])).toEqual({ line: 6, column: 3 });
  expect(document.locate(['spec', 'tier'])).toEqual({ line: 6, column: 3 });
  expect(document.locate(['metadata', 'links', 3, 'url'])).toEqual({ line: 4, column: 3 });
});

test('a manifest declares the whole entity: what it leaves out is cleared, a README string is markdown', () => {
  const [minimal] = readManifestDocuments(minimalManifest('pay'));
  expect(entityInputOf(minimal.manifest as Manifest)).toEqual({
    service_id: undefined,
    name: 'pay',
    type: 'service',
    lifecycle: null,
    owner: null,
    description: null,
    tier: null,
    tags: [],
    links: [],
    relations: [],
    readme: null,
  });
  const [withText] = readManifestDocuments(`${minimalManifest('pay')}  readme: "# Pay"\n`);
  expect(entityInputOf(withText.manifest as Manifest).readme).toEqual({ content: '# Pay', format: 'markdown' });
});

test('an entity rendered as a manifest reads back as the same entity, relations sorted and empty fields left out', () => {
  const entity: EntityView = {
    id: '3f0c1f4e-8a7b-4d5e-9f00-112233445566',
    service_id: 'pay',
    name: 'Pay: "the" service',
    type: 'service',
    lifecycle: 'production',
    owner: 'team-payments',
    description: null,
    tier: null,
    tags: ['yes', '123'],
    links: [{ title: 'Repo', url: 'https://git.example.com/pay' }],
    source: 'api',
    last_activity_at: '2026-01-01T00:00:00.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
  const readme = { content: '# Pay\n\nMoney in, money out.\n', format: 'markdown' as const };
  const relations = [
    { type: 'part_of' as const, target: 'shop' },
    { type: 'depends_on' as const, target: 'ledger' },
  ];
  const text = renderYaml([manifestOfEntity(entity, readme, relations)]);
  const [read] = readManifestDocuments(text);
  expect(read.problems).toEqual([]);
  expect(read.manifest).toEqual({
    apiVersion: 'shipyard.dev/v1',
    kind: 'Entity',
    metadata: { name: entity.name, service_id: 'pay', tags: ['yes', '123'], links: entity.links },
    spec: {
      type: 'service',
      lifecycle: 'production',
      owner: 'team-payments',
      relations: [relations[1], relations[0]],
      readme,
    },
  });
});

test('several manifests render as one stream that reads back document by document', () => {
  const [one, two] = [fullManifest('one'), minimalManifest('two')].map((text) => readManifestDocuments(text)[0]);
  const stream = renderYaml([one.manifest, two.manifest]);
  expect(readManifestDocuments(stream).map((d) => d.manifest)).toEqual([one.manifest, two.manifest]);
});

test('characters YAML may not carry raw are escaped inside double quotes, keys included, and read back', () => {
  // DEL and the C1 controls (NEL among them), LS, PS, the BOM, U+FFFE and U+FFFF: the yaml package
  // writes each raw, and PyYAML refuses the document (or reads NEL, LS and PS as line breaks).
  const awkward = ['\x7f', ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i))]
    .concat(['\u2028', '\u2029', '\ufeff', '\ufffe', '\uffff'])
    .join('');
  const value = { [`k\x85ey`]: `a${awkward}b`, alone: '\ufffe', list: ['\u2028', 'plain', 'tab\tand\u00e9'] };
  const text = renderYaml([value, { second: '\x9f' }]);
  expect(text).not.toMatch(/[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/);
  expect(text).toContain('"k\\Ney": "a\\x7f\\x80');
  expect(text).toContain('alone: "\\ufffe"');
  // Strings without them keep the style the yaml package chose.
  expect(text).toContain('- "\\L"\n  - plain\n  - tab\tandé\n');
  for (const version of ['1.1', '1.2'] as const) {
    expect(parseAllDocuments(text, { version }).map((doc) => doc.toJS())).toEqual([value, { second: '\x9f' }]);
  }
});

test('text nested deeper than 64 levels is refused as a whole before the YAML parser sees it', () => {
  // The parser would answer these with problems (after seconds); the 400 comes from the pre-check.
  for (const deep of ['- '.repeat(500_000) + 'x', '['.repeat(1_000_000), '{a: '.repeat(250_000)]) {
    expect(() => parseYamlStream(deep)).toThrow(
      expect.objectContaining({
        status: 400,
        details: [{ field: 'body.content', message: 'line 1: more than 64 levels of nesting' }],
      }),
    );
  }
  const staircase = Array.from({ length: 70 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
  expect(tooDeepAt(staircase)).toBe(65);
  // Twenty levels of maps with flow collections inside are fine.
  const nested = `${Array.from({ length: 20 }, (_, i) => `${' '.repeat(i * 2)}k${i}:`).join('\n')} [[1, {a: [2]}]]`;
  expect(parseYamlStream(nested)[0].problems).toEqual([]);
});
