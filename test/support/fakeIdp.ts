import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the identity provider (a third party we cannot run here): it serves a real
 * JWKS document over HTTP and signs tokens with the matching private key.
 */
export interface FakeIdp {
  jwksUrl: string;
  issuer: string;
  publicKeyPem: string;
  sign(claims: Record<string, unknown>, options?: { audience?: string; expiresInSeconds?: number }): Promise<string>;
  close(): Promise<void>;
}

export async function startFakeIdp(audience: string): Promise<FakeIdp> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/jwks.json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (
    key: KeyLike,
    claims: Record<string, unknown>,
    options: { audience?: string; expiresInSeconds?: number } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .setIssuer(base)
      .setAudience(options.audience ?? audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + (options.expiresInSeconds ?? 300))
      .sign(key);
  return {
    jwksUrl: `${base}/.well-known/jwks.json`,
    issuer: base,
    publicKeyPem: await exportSPKI(publicKey),
    sign: (claims, options) => sign(privateKey, claims, options),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
