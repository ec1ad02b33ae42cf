import { statement } from '../../db/statements';

// Counts of rows by several dimensions in one scan (grouping sets), each dimension's values the
// most frequent first and at most STATS_VALUES_MAX of them, and the total. A value that is null
// counts as `unknown`.

/** How many values of one dimension the stats list (the most frequent first). */
const STATS_VALUES_MAX = 100;

type CountRow = { dimension: string | null; value: string | null; count: number };

export type Counts<Dimension extends string> = { total: number } & Record<Dimension, Record<string, number>>;

/**
 * A statement counting the rows of `from` (SQL after FROM: a table, its alias and a where clause,
 * no bindings) by each of `dimensions` (a name → an SQL expression over the rows).
 */
export function countsStatement<Dimension extends string>(from: string, dimensions: Record<Dimension, string>) {
  const entries = Object.entries(dimensions) as [Dimension, string][];
  const expressions = entries.map(([, sql]) => `(${sql})`);
  // In a row of one grouping set the other dimensions are null, so coalesce gives its own value.
  const value = `coalesce(${expressions.map((sql) => `${sql}::text`).join(', ')})`;
  const counts = statement<CountRow>((q) =>
    q.raw(
      `select dimension, value, count from (
         select case ${entries.map(([name], i) => `when grouping(${expressions[i]}) = 0 then '${name}'`).join(' ')} end
             as dimension,
           ${value} as value, count(*)::int as count,
           row_number() over (partition by grouping(${expressions.join(', ')}) order by count(*) desc, ${value}) as rank
         from ${from}
         group by grouping sets (${expressions.map((sql) => `(${sql})`).join(', ')}, ())
       ) counted where dimension is null or rank <= ${STATS_VALUES_MAX}`,
    ),
  );
  return async (db: Parameters<typeof counts.rows>[0]): Promise<Counts<Dimension>> => {
    const result = { total: 0, ...Object.fromEntries(entries.map(([name]) => [name, {}])) } as Counts<Dimension>;
    for (const row of await counts.rows(db)) {
      if (row.dimension === null) result.total = row.count;
      else (result[row.dimension as Dimension] as Record<string, number>)[row.value ?? 'unknown'] = row.count;
    }
    return result;
  };
}
