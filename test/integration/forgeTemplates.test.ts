import { useForgeSuite } from '../support/forgeRuns';
import { startTarget, type Target } from '../support/httpTarget';

// An api-call's parts are capped once its parameters are filled in (docs/limits.md, "Forge
// templates"): a small mold and a modest parameter cannot make the worker send megabytes.

const forge = useForgeSuite();
const { createMold, startRun, logMessages, waitForStatus } = forge;

let target: Target;
beforeAll(async () => {
  target = await startTarget();
});
afterAll(() => target.close());

test('a body that would pass 1 MiB once filled in fails its step at once, without a retry, and nothing is sent', async () => {
  // 100 references to a 20 KB value: a mold of 3 KB would become a 2 MB body.
  const mold = await createMold({
    parameters: [{ name: 'blob', type: 'string', required: true }],
    actions: [
      {
        name: 'amplify',
        type: 'api-call',
        config: {
          method: 'POST',
          url: `${target.url}/amplified`,
          body: { copies: Array(100).fill('${{ parameters.blob }}') },
          max_attempts: 3,
        },
      },
    ],
  });
  const done = await waitForStatus((await startRun(mold.slug, { blob: 'x'.repeat(20_000) })).id, [
    'completed',
    'failed',
  ]);
  expect(done.status).toBe('failed');
  const error = 'the body exceeds its limit of 1048576 bytes once its parameters are filled in';
  expect(done.steps[0]).toEqual(expect.objectContaining({ status: 'failed', error }));
  const messages = await logMessages(done.id);
  expect(messages.filter((m) => m.startsWith('amplify: starting'))).toEqual(['amplify: starting api-call (attempt 1)']);
  expect(messages).toContain(`amplify: ${error}`);
  expect(target.requests.filter((r) => r.path === '/amplified')).toEqual([]);
}, 60_000);
