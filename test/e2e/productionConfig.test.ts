import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { launch } from '../support/processes';

// In production the API trusts no key it generated itself: started without one it needs, it
// exits at once with a message saying what to configure, instead of serving.
const KEYS = `k1:${randomBytes(32).toString('base64')}`;

test.each([
  [
    'SHIPYARD_ENCRYPTION_KEYS',
    { SHIPYARD_ENCRYPTION_KEYS: '' },
    'NODE_ENV=production requires SHIPYARD_ENCRYPTION_KEYS',
  ],
  [
    'AUTH_JWKS_URL or AUTH_PUBLIC_KEY',
    { SHIPYARD_ENCRYPTION_KEYS: KEYS },
    'NODE_ENV=production requires AUTH_JWKS_URL or AUTH_PUBLIC_KEY',
  ],
])(
  'with NODE_ENV=production and no %s, the API refuses to start',
  async (_, env, message) => {
    const api = launch(
      'api/server.ts',
      [],
      { NODE_ENV: 'production', AUTH_JWKS_URL: '', AUTH_PUBLIC_KEY: '', PORT: '0', ...env },
      { relay: false },
    );
    let stderr = '';
    api.stderr?.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(api, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain(message);
  },
  60_000,
);
