import { busFactorOf } from '../../core/insights/busFactorRules';

const author = (email: string, lines: number) => ({ name: email.split('@')[0], email, lines });

test('one author is a bus factor of 1 with the whole share', () => {
  expect(busFactorOf([author('a@x', 12)])).toEqual({
    bus_factor: 1,
    lines: 12,
    contributors: [{ name: 'a', email: 'a@x', lines: 12, share: 1 }],
  });
});

test('exactly half is not more than half: two equal authors are a bus factor of 2', () => {
  expect(busFactorOf([author('b@x', 50), author('a@x', 50)])).toMatchObject({
    bus_factor: 2,
    contributors: [{ email: 'a@x' }, { email: 'b@x' }],
  });
});

test('the count is the fewest: the largest authors first, equal shares ordered by email', () => {
  const result = busFactorOf([author('c@x', 30), author('b@x', 30), author('a@x', 40)]);
  expect(result.bus_factor).toBe(2);
  expect(result.contributors.map((c) => [c.email, c.share])).toEqual([
    ['a@x', 0.4],
    ['b@x', 0.3],
    ['c@x', 0.3],
  ]);
});

test('a typical team: 25 + 20 + 15 of 100 is the first sum over half', () => {
  const team = [25, 20, 15, 15, 10, 10, 5].map((lines, i) => author(`${i}@x`, lines));
  expect(busFactorOf(team).bus_factor).toBe(3);
});

test('one dominant author among many is still 1', () => {
  expect(
    busFactorOf([author('big@x', 51), ...Array.from({ length: 49 }, (_, i) => author(`${i}@x`, 1))]).bus_factor,
  ).toBe(1);
});

test('no authors, or no lines changed, is null with the reason', () => {
  expect(busFactorOf([])).toEqual({ bus_factor: null, reason: 'no_commits_in_window', lines: 0, contributors: [] });
  expect(busFactorOf([author('a@x', 0)])).toMatchObject({ bus_factor: null, reason: 'no_lines_changed' });
});
