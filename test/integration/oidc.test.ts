import { generateKeyPair, SignJWT } from 'jose';
import { bearer, jsonOf, sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';
import { startFakeIdp, type FakeIdp } from '../support/fakeIdp';

// Session tokens from an external identity provider, verified against its JWKS over HTTP or
// against a configured PEM key, instead of the local dev key.
let idp: FakeIdp;
let tenantId: string;
beforeAll(async () => {
  idp = await startFakeIdp('shipyard');
  ({ tenantId } = await sessionToken({ tenant: `oidc-${Date.now()}`, email: 'seed@oidc.test' }));
});
afterAll(() => idp.close());

async function apiWith(auth: Partial<ReturnType<typeof testConfig>['auth']>): Promise<TestApi> {
  const config = testConfig();
  return startApi({ deps: await testDeps({ ...config, auth: { ...config.auth, issuer: idp.issuer, ...auth } }) });
}

const claims = () => ({
  sub: 'idp|42',
  email: 'grace@oidc.test',
  name: 'Grace',
  tenant_id: tenantId,
  groups: ['platform'],
});

test.each([
  ['a JWKS URL', () => ({ jwksUrl: idp.jwksUrl })],
  ['a PEM public key', () => ({ publicKeyPem: idp.publicKeyPem, publicKeyAlg: 'RS256' })],
])('with %s, the provider’s tokens authenticate and claims become the user', async (_, auth) => {
  const api = await apiWith(auth());
  try {
    const res = await fetch(`${api.url}/api/v1/me`, { headers: bearer(await idp.sign(claims())) });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(
      expect.objectContaining({ email: 'grace@oidc.test', name: 'Grace', tenant_id: tenantId, groups: ['platform'] }),
    );
  } finally {
    await api.close();
  }
});

test('tokens signed by another key, for another audience, expired, or from the dev key are refused', async () => {
  const api = await apiWith({ jwksUrl: idp.jwksUrl });
  try {
    const { privateKey: stranger } = await generateKeyPair('RS256');
    const forged = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .setIssuer(idp.issuer)
      .setAudience('shipyard')
      .setExpirationTime('5m')
      .sign(stranger);
    const devToken = (await sessionToken({ tenant: `oidc-dev-${Date.now()}`, email: 'dev@oidc.test' })).token;
    for (const token of [
      forged,
      await idp.sign(claims(), { audience: 'someone-else' }),
      await idp.sign(claims(), { expiresInSeconds: -30 }),
      devToken,
    ]) {
      expect((await fetch(`${api.url}/api/v1/me`, { headers: bearer(token) })).status).toBe(401);
    }
  } finally {
    await api.close();
  }
});

test('a provider subject seen first with the email of a CLI-made user is linked to it only when the provider verified the email', async () => {
  const cli = await sessionToken({ tenant: tenantId, email: 'linked@oidc.test', roles: ['viewer'] });
  const dev = await startApi(); // the default configuration, which accepts CLI tokens
  try {
    expect((await fetch(`${dev.url}/api/v1/me`, { headers: bearer(cli.token) })).status).toBe(200);
  } finally {
    await dev.close();
  }
  const api = await apiWith({ jwksUrl: idp.jwksUrl });
  try {
    const signIn = async (emailVerified: unknown) =>
      fetch(`${api.url}/api/v1/me`, {
        headers: bearer(
          await idp.sign({
            sub: 'idp|linked',
            email: 'linked@oidc.test',
            email_verified: emailVerified,
            name: 'Linked',
            tenant_id: tenantId,
            groups: [],
          }),
        ),
      });
    // Unverified (absent, false, or the string "true"): the account is not taken over.
    for (const unverified of [undefined, false, 'true']) expect((await signIn(unverified)).status).toBe(401);
    for (let i = 0; i < 2; i++) {
      const res = await signIn(true);
      expect(res.status).toBe(200);
      expect(await jsonOf(res)).toEqual(
        expect.objectContaining({ id: cli.userId, email: 'linked@oidc.test', name: 'Linked', roles: ['viewer'] }),
      );
    }
  } finally {
    await api.close();
  }
});

test('a new subject with a new email signs in whether or not the email is verified', async () => {
  const api = await apiWith({ jwksUrl: idp.jwksUrl });
  try {
    const token = await idp.sign({
      sub: 'idp|fresh',
      email: 'fresh@oidc.test',
      name: 'Fresh',
      tenant_id: tenantId,
      groups: [],
    });
    const res = await fetch(`${api.url}/api/v1/me`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(expect.objectContaining({ email: 'fresh@oidc.test' }));
  } finally {
    await api.close();
  }
});

test('a known subject whose new email another user holds still signs in, as itself, keeping its stored email', async () => {
  const holder = await sessionToken({ tenant: tenantId, email: 'taken@oidc.test' });
  const api = await apiWith({ jwksUrl: idp.jwksUrl });
  try {
    const asMover = (email: string) =>
      idp.sign({ sub: 'idp|mover', email, name: 'Mover', tenant_id: tenantId, groups: [] });
    const first = await jsonOf(
      await fetch(`${api.url}/api/v1/me`, { headers: bearer(await asMover('mover@oidc.test')) }),
    );
    const res = await fetch(`${api.url}/api/v1/me`, { headers: bearer(await asMover('taken@oidc.test')) });
    expect(res.status).toBe(200);
    const me = await jsonOf(res);
    expect(me.id).toBe(first.id);
    expect(me.id).not.toBe(holder.userId);
    expect(me.email).toBe('mover@oidc.test');
  } finally {
    await api.close();
  }
});
