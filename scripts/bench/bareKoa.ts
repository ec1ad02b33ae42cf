import { createServer } from 'node:http';
import Koa from 'koa';

// The floor for `npm run bench:http`'s public route: a Koa app with one JSON answer and nothing
// else, run as its own process like the API. Prints its port once listening.
const app = new Koa();
app.use((ctx) => {
  ctx.body = { status: 'ok' };
});
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : ''}\n`);
});
