import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createApiServer } from '../../api/http/connections';

// The API's sockets: no client holds one for nothing. Small limits, so each closes quickly; the
// waits below are bounds for a shared machine, not measurements.
const limits = { requestTimeoutMs: 1_000, headersTimeoutMs: 300, keepAliveTimeoutMs: 300, socketIdleTimeoutMs: 2_500 };
let server: Server;
let port: number;

beforeAll(async () => {
  server = createApiServer((req, res) => {
    // /hang takes the request and never answers: only the idle timeout ends it.
    if (req.url !== '/hang') res.end('ok');
  }, limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** A raw connection, what it received, and a promise of its end. */
function open(): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let data = '';
  socket.on('data', (chunk) => (data += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => data, closed };
}

const within = (promise: Promise<void>, ms: number) =>
  Promise.race([
    promise.then(() => 'closed'),
    new Promise((resolve) => setTimeout(() => resolve('still open'), ms).unref()),
  ]);

test('a client that never finishes its headers gets a 408 in the error envelope and the socket is closed', async () => {
  const client = open();
  client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
  expect(await within(client.closed, 5_000)).toBe('closed');
  expect(client.received()).toMatch(/^HTTP\/1\.1 408 [^]*"REQUEST_TIMEOUT"/);
});

test('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
  const client = open();
  client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  expect(await within(client.closed, 5_000)).toBe('closed');
  expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
});

test('a socket silent both ways past the idle timeout is destroyed, even mid-request', async () => {
  const client = open();
  client.socket.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
  expect(await within(client.closed, 5_000)).toBe('closed');
  expect(client.received()).toBe('');
});
