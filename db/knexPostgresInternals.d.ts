// Types for the two knex modules db/tenancy.ts extends. knex ships none for its dialect
// classes; this declares only what we use.
declare module 'knex/lib/dialects/postgres' {
  import type { Knex } from 'knex';
  const PostgresClient: typeof Knex.Client;
  export = PostgresClient;
}

declare module 'knex/lib/dialects/postgres/execution/pg-transaction' {
  import type { Knex } from 'knex';
  class PostgresTransaction {
    constructor(client: Knex.Client, container: unknown, config: unknown, outerTx: unknown);
    begin(connection: unknown): Promise<unknown>;
    protected query(connection: unknown, sql: string): Promise<unknown>;
  }
  export = PostgresTransaction;
}
