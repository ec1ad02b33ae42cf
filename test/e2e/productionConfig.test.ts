import { once } from 'node:events';
import { launch } from '../support/processes';

// In production the API trusts no key it generated itself: started without an identity
// provider it exits at once with a message saying what to configure, instead of serving.
test('with NODE_ENV=production and neither AUTH_JWKS_URL nor AUTH_PUBLIC_KEY, the API refuses to start', async () => {
  const api = launch('api/server.ts', [], { NODE_ENV: 'production', AUTH_JWKS_URL: '', AUTH_PUBLIC_KEY: '', PORT: '0' }, { relay: false });
  let stderr = '';
  api.stderr?.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(api, 'exit');
  expect(code).toBe(1);
  expect(stderr).toContain('NODE_ENV=production requires AUTH_JWKS_URL or AUTH_PUBLIC_KEY');
}, 60_000);
