import { parseDocument } from 'yaml';
import { overJsonBudget } from '../../api/http/jsonBody';
import { relationRefusals, writeOrder } from '../../core/manifests/importRules';
import { largestDocumentNodes } from '../../core/manifests/streamScan';
import { measureDocument } from '../../core/manifests/yamlBudget';
import { aliasBomb, selfAlias, wideMap } from '../support/hostileBodies';

// The pure counting rules behind the parsed-input budgets (docs/limits.md, "Parsed input").

const budget = { nodes: 1_000, keysPerMap: 100 };
const measure = (text: string, limits = budget) => measureDocument(parseDocument(text, { uniqueKeys: false }), limits);

test('an alias counts as the size of its anchor, aliases to empty collections included', () => {
  // a0 is 1 node; a1 holds 3 aliases of it (1 + 3); a2 holds 3 aliases of a1 (1 + 3 × 4): 13.
  const text = 'a0: &a0 []\na1: &a1 [*a0, *a0, *a0]\na2: &a2 [*a1, *a1, *a1]\n';
  // The map (1) + three keys (3) + a0 (1) + a1 (4) + a2 (13) = 22: under a budget of 22, over one of 21.
  expect(measure(text, { nodes: 22, keysPerMap: 10 }).overBudget).toEqual([]);
  expect(measure(text, { nodes: 21, keysPerMap: 10 }).overBudget).toEqual([
    { offset: 0, message: expect.stringMatching(/more than 21 nodes \(SHIPYARD_MANIFEST_MAX_NODES\)/) },
  ]);
});

test('the issue’s alias bomb (14^6 nodes from 610 bytes) is over budget, measured without expanding it', () => {
  const { overBudget } = measure(aliasBomb(), { nodes: 20_000, keysPerMap: 1_000 });
  expect(overBudget.map((p) => p.message)).toEqual([expect.stringMatching(/more than 20000 nodes/)]);
  // Twice as many levels would be 14^12 nodes: still measured at once, the sizes saturating at the budget.
  expect(measure(aliasBomb(12), { nodes: 20_000, keysPerMap: 1_000 }).overBudget).toHaveLength(1);
});

test('an alias inside its own anchor is over budget at the alias, not a cycle to walk', () => {
  const { overBudget } = measure(selfAlias());
  expect(overBudget[0].message).toBe('alias *a refers to its own anchor');
  expect(selfAlias().slice(overBudget[0].offset, overBudget[0].offset + 2)).toBe('*a');
});

test('a map wider than the key budget is over it; a key given twice is a duplicate, found in one pass', () => {
  const wide = Array.from({ length: 101 }, (_, i) => `k${i}: 1`).join('\n');
  expect(measure(wide).overBudget.map((p) => p.message)).toEqual([
    expect.stringMatching(/a map has 101 keys, more than 100 \(SHIPYARD_MANIFEST_MAX_KEYS\)/),
  ]);
  const { overBudget, duplicateKeys } = measure('a: 1\nb: 2\na: 3\nc: {d: 1, d: 2}\n');
  expect(overBudget).toEqual([]);
  expect(duplicateKeys.map((p) => p.message)).toEqual(['Map keys must be unique: "a"', 'Map keys must be unique: "d"']);
});

test('the nodes a document writes are estimated from its text: entries, items and flow items, not block text', () => {
  expect(largestDocumentNodes('a: 1\nb:\n  - x\n  - y\n')).toBe(6);
  expect(largestDocumentNodes('tags: [a, "b, c", d]\n')).toBe(2 + 2 + 2);
  // A README's lines are text however they look; the largest document counts, not the stream.
  const readme = `readme: |\n${Array.from({ length: 50 }, (_, i) => `  k${i}: [x, y]\n`).join('')}`;
  expect(largestDocumentNodes(`${readme}---\na: 1\n`)).toBe(2);
  expect(largestDocumentNodes(wideMap(40_000))).toBeGreaterThan(80_000);
});

test('a JSON body’s depth is found on its text in one pass, brackets inside strings not counted', () => {
  const deeperThan = (text: string, max: number) => overJsonBudget(text, max, 1_000) === 'depth';
  expect(deeperThan('[[[1]]]', 3)).toBe(false);
  expect(deeperThan('[[[[1]]]]', 3)).toBe(true);
  expect(deeperThan(JSON.stringify({ a: '[[[[{{{{', b: ['\\"[[[['] }), 2)).toBe(false);
  // A string that ends in a backslash closes at its quote: what follows counts.
  expect(deeperThan(JSON.stringify({ a: 'ends in \\', b: [[[1]]] }), 3)).toBe(true);
  expect(deeperThan(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).toBe(true);
});

test('an array of more items than allowed is found on the text, whatever its depth; commas of objects and strings not counted', () => {
  const items = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
  expect(overJsonBudget(items(3), 64, 3)).toBeUndefined();
  expect(overJsonBudget(items(4), 64, 3)).toBe('items');
  expect(overJsonBudget(JSON.stringify({ a: [1, 2, 3], b: { c: [[1, 2, 3, 4]] } }), 64, 3)).toBe('items');
  expect(
    overJsonBudget(JSON.stringify({ a: 1, b: 2, c: 3, d: 4, e: 'x,y,z,w', f: ['a,b,c,d'] }), 64, 3),
  ).toBeUndefined();
  expect(overJsonBudget('[]', 64, 1)).toBeUndefined();
});

describe('relation refusals of an import', () => {
  const entity = (index: number, serviceId: string, ...targets: string[]) => ({
    index,
    serviceId,
    relations: targets.map((target) => ({ type: 'depends_on' as const, target })),
  });

  test('a relation to another document or to a stored entity is kept; to nothing or to itself it is refused', () => {
    const refusals = relationRefusals(
      [entity(0, 'a', 'b', 'stored'), entity(1, 'b', 'a'), entity(2, 'c', 'nothing', 'c')],
      new Map([['stored', 'stored']]),
    );
    expect([...refusals]).toEqual([
      [
        2,
        [
          { field: 'body.relations[0].target', message: 'no entity "nothing" in this tenant' },
          { field: 'body.relations[1].target', message: 'an entity cannot relate to itself' },
        ],
      ],
    ]);
  });

  test('a refusal travels back along a chain of any length, but stops at an entity already stored', () => {
    const chain = Array.from({ length: 10_000 }, (_, i) => entity(i, `e${i}`, i < 9_999 ? `e${i + 1}` : 'missing'));
    expect(relationRefusals(chain, new Map()).size).toBe(10_000);
    // e5000 is refused, yet it exists already: e4999 relates to the stored entity and is kept.
    const refusals = relationRefusals(chain, new Map([['e5000', 'e5000']]));
    expect(refusals.size).toBe(5_000);
    expect(refusals.has(4_999)).toBe(false);
    expect(refusals.get(5_000)).toEqual([
      { field: 'body.relations[0].target', message: 'no entity "e5001" in this tenant' },
    ]);
  });

  test('entities are written targets first, each once; only a cycle, and what needs it, waits for a second write', () => {
    const order = writeOrder(
      [
        entity(0, 'web', 'api', 'db'),
        entity(1, 'api', 'db'),
        entity(2, 'db'),
        entity(3, 'a', 'b'),
        entity(4, 'b', 'a'),
        entity(5, 'needs-cycle', 'a'),
        entity(6, 'refused', 'db'),
        entity(7, 'needs-refused', 'refused'),
      ],
      new Set([6]),
    );
    expect(order).toEqual({ ordered: [2, 7, 1, 0], cyclic: [3, 4, 5] });
  });
});
