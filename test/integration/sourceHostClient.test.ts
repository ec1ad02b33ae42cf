import { createEgressClient } from '../../core/egress/egressClient';
import { parseEgressAllow } from '../../core/egress/egressRules';
import { SourceHostClient, SourceHostError } from '../../core/sourceHost/client';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { testConfig } from '../support/harness';

// The crawler's client of the source host, through the real egress guard, against the local
// fake of the host's API over a real socket.

let host: FakeSourceHost;
let client: SourceHostClient;
const egress = createEgressClient(parseEgressAllow(testConfig().egressAllow));

beforeAll(async () => {
  host = await startFakeSourceHost();
  client = new SourceHostClient(egress, { baseUrl: `${host.url}/`, token: host.token });
});
afterAll(() => host.close());

test('lists every repository page after page (past the 100 of one page), with its metadata', async () => {
  for (let i = 0; i < 130; i++) host.repositories.add(`bulk/repo-${String(i).padStart(3, '0')}`);
  host.details.set('bulk/repo-007', { description: 'Seven', language: 'Rust', topics: ['cli'], fork: true });
  const listed = await client.listRepositories();
  expect(listed).toHaveLength(130);
  expect(host.requests.filter((r) => r.path === '/user/repos')).toHaveLength(2);
  expect(listed.find((r) => r.full_name === 'bulk/repo-007')).toEqual({
    full_name: 'bulk/repo-007',
    owner: 'bulk',
    name: 'repo-007',
    description: 'Seven',
    language: 'Rust',
    topics: ['cli'],
    fork: true,
    archived: false,
    private: false,
    default_branch: 'main',
    html_url: `${host.url}/bulk/repo-007`,
  });
});

test('reads the README (null without one) and every Markdown file under docs/, sub-directories included', async () => {
  host.repositories.add('docs/site');
  host.files.set(
    'docs/site',
    new Map([
      ['README.md', '# Site\nÜber alles.\n'],
      ['docs/a.md', 'A'],
      ['docs/deep/er/b.markdown', 'B'],
      ['docs/logo.svg', '<svg/>'],
      ['src/c.md', 'not under docs/'],
    ]),
  );
  expect(await client.readme('docs/site')).toMatchObject({ path: 'README.md', content: '# Site\nÜber alles.\n' });
  expect((await client.docs('docs/site')).map((f) => [f.path, f.content])).toEqual([
    ['docs/a.md', 'A'],
    ['docs/deep/er/b.markdown', 'B'],
  ]);
  host.repositories.add('docs/bare');
  expect(await client.readme('docs/bare')).toBeNull();
  expect(await client.docs('docs/bare')).toEqual([]);
});

test('a refusal of the host is a SourceHostError with its status, and never carries the token', async () => {
  const wrong = new SourceHostClient(egress, { baseUrl: host.url, token: 'not-the-token' });
  const failure = await wrong.listRepositories().catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(SourceHostError);
  expect(failure).toMatchObject({ status: 401 });
  expect(String((failure as Error).message)).not.toContain('not-the-token');
});

test('a name that is not owner/name is refused before any request', async () => {
  const before = host.requests.length;
  for (const name of ['../etc', 'a/../b', 'a', 'a/b/c', 'a/b?x=1'])
    await expect(client.readme(name)).rejects.toBeInstanceOf(SourceHostError);
  expect(host.requests.length).toBe(before);
});
