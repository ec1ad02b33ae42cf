import type { Knex } from 'knex';
import path from 'node:path';
import { loadConfig } from '../api/config';

// Migrations run as the owner role; the app role only gets the privileges the owner grants.
const config: Knex.Config = {
  client: 'pg',
  connection: loadConfig().database.ownerUrl,
  migrations: {
    directory: path.join(__dirname, 'migrations'),
    // Under tsx the sources are .ts; a `npm run build` output has .js.
    loadExtensions: [path.extname(__filename)],
  },
};

export default config;
