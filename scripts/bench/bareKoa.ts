import { createServer } from 'node:http';
import Koa from 'koa';
import { Pool } from 'pg';

// A reference for `npm run bench:http`, run as its own process like the API; prints its port
// once listening. A bare Koa app that answers every request with the raw `pg` tenant transaction
// of the bench (BEGIN, set_config, the query, COMMIT) for BENCH_TENANT_ID on BENCH_DATABASE_URL:
// what HTTP costs on top of the database on this machine, with no auth, validation, logging or
// query builder.
const pool = new Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 10 });
const tenantId = process.env.BENCH_TENANT_ID;

const app = new Koa();
app.use(async (ctx) => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant_id', $1, true)", [tenantId]);
    const { rows } = await client.query('select id, name from role_bundles order by name limit 21');
    await client.query('commit');
    ctx.body = { roles: rows };
  } finally {
    client.release();
  }
});
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : ''}\n`);
});
