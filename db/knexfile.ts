import type { Knex } from 'knex';
import path from 'node:path';

/** Knex settings for migrations, which run as the owner role. */
export function migrationConfig(ownerUrl: string): Knex.Config {
  return {
    client: 'pg',
    connection: ownerUrl,
    migrations: {
      directory: path.join(__dirname, 'migrations'),
      // Under tsx the sources are .ts; a `npm run build` output has .js.
      loadExtensions: [path.extname(__filename)],
    },
  };
}
