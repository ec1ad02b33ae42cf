import type { Knex } from 'knex';
import { givenFilters, whereGiven, type Placeholders } from '../../db/statements';

/** A list filter over rows an agent pushes as a snapshot: equal columns, a name prefix, gone rows on request. */
export interface SnapshotFilter {
  /** A prefix of the name. */
  search?: string;
  include_gone: boolean;
}

/** Which of a snapshot filter's parts a request uses: the shape a prepared statement is named by. */
export interface SnapshotFilterShape<Name extends string> {
  equal: Name[];
  search: boolean;
  includeGone: boolean;
}

/**
 * The filter of a list of pushed rows (workloads, GitOps resources) in `table as alias`: each
 * given column of `columns` equal to its value, the name starting with `search` (Kubernetes
 * names are lower case, so the prefix is too), and only present rows unless `include_gone`.
 */
export function snapshotFilter<Name extends string>(table: string, alias: string, columns: Record<Name, string>) {
  return {
    shapeOf: (filter: Partial<Record<Name, string>> & SnapshotFilter): SnapshotFilterShape<Name> => ({
      equal: givenFilters(filter, columns),
      search: filter.search !== undefined,
      includeGone: filter.include_gone,
    }),
    apply(q: Knex, values: Placeholders<Record<Name | 'search', string>>, shape: SnapshotFilterShape<Name>) {
      const query = whereGiven(q(`${table} as ${alias}`), columns, values, shape.equal);
      if (shape.search) query.whereRaw(`starts_with(${alias}.name, lower(?))`, [values.search]);
      if (!shape.includeGone) query.whereNull(`${alias}.gone_at`);
      return query;
    },
  };
}
