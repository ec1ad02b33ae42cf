import { orgChartOrder, parentCycle } from '../../core/teams/hierarchyRules';

// The org chart's order and the cycle check of bulk parent changes.

const team = (id: string, parent_id: string | null = null) => ({ id, parent_id });

test('the org chart lists each team after its parent, children in the given order, depth by depth', () => {
  const order = orgChartOrder([team('a'), team('b', 'a'), team('c'), team('d', 'b'), team('e', 'a')]);
  expect(order.map((n) => [n.team.id, n.depth, n.children])).toEqual([
    ['a', 0, ['b', 'e']],
    ['b', 1, ['d']],
    ['d', 2, []],
    ['e', 1, []],
    ['c', 0, []],
  ]);
});

test('a chain 100 000 teams deep is ordered without exhausting the stack', () => {
  const chain = Array.from({ length: 100_000 }, (_, i) => team(`t${i}`, i ? `t${i - 1}` : null));
  const order = orgChartOrder(chain);
  expect(order.at(-1)).toMatchObject({ depth: 99_999 });
});

test('a cycle through a changed team is found and named; a tree has none', () => {
  const parents = new Map<string, string | null>([
    ['a', 'c'],
    ['b', 'a'],
    ['c', 'b'],
    ['d', null],
    ['e', 'd'],
  ]);
  expect(parentCycle(parents, ['e', 'a'])).toEqual(['a', 'c', 'b']);
  expect(parentCycle(parents, ['e'])).toBeUndefined();
  expect(parentCycle(new Map([['x', 'x']]), ['x'])).toEqual(['x']);
  // A change that leads into a cycle names the cycle, not the way into it.
  expect(parentCycle(new Map<string, string | null>([['z', 'a'], ...parents]), ['z'])).toEqual(['a', 'c', 'b']);
});
