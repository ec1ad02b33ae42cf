import { createRemoteJWKSet, importJWK, importSPKI, jwtVerify, SignJWT, type JWK, type KeyLike } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { readOrCreateKeyFile } from '../crypto/keyFile';
import { sha256 } from './tokens';
import type { Config } from '../config';

/** What a session token says about its bearer (OIDC-style claims). */
export interface SessionClaims {
  subject: string;
  email: string;
  /** The identity provider vouches for the email (`email_verified: true`). */
  emailVerified: boolean;
  name: string;
  tenantId: string;
  groups: string[];
  expiresAt: Date;
}

export type SessionVerifier = (token: string) => Promise<SessionClaims>;

const DEV_ALGORITHM = 'EdDSA';
const devKeyPath = (config: Config) => path.join(config.dataDir, 'auth', 'dev-signing-key.json');

/**
 * The local development signing key: created on first use and shared by the API and the
 * `shipyard token` CLI through the data folder. Used only when no JWKS URL or public key is set.
 */
async function devKeyPair(config: Config): Promise<{ privateKey: KeyLike; publicKey: KeyLike }> {
  const jwk: JWK = JSON.parse(
    readOrCreateKeyFile(devKeyPath(config), () =>
      JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })),
    ),
  );
  const { d: _secret, ...publicJwk } = jwk;
  return {
    privateKey: (await importJWK(jwk, DEV_ALGORITHM)) as KeyLike,
    publicKey: (await importJWK(publicJwk, DEV_ALGORITHM)) as KeyLike,
  };
}

/**
 * Verifies session tokens with the configured key (an identity provider's, or the dev key).
 * `audience`: another audience than sessions' (the codec sign-in's), whose tokens are then
 * useless as session tokens and the other way round.
 */
export async function createSessionVerifier(
  config: Config,
  audience: string = config.auth.audience,
): Promise<SessionVerifier> {
  const { issuer, jwksUrl, publicKeyPem, publicKeyAlg } = config.auth;
  // A key the API generated itself is only for development: in production it would trust
  // whoever can read the data folder (or run the CLI) to mint a token for any tenant.
  if (config.production && !jwksUrl && !publicKeyPem) {
    throw new Error(
      'NODE_ENV=production requires AUTH_JWKS_URL or AUTH_PUBLIC_KEY (the identity provider that signs session tokens)',
    );
  }
  const key = jwksUrl
    ? createRemoteJWKSet(new URL(jwksUrl))
    : publicKeyPem
      ? await importSPKI(publicKeyPem, publicKeyAlg)
      : (await devKeyPair(config)).publicKey;
  const verified = new VerifiedTokens();
  return async (token) => {
    const known = verified.get(token);
    if (known) return known;
    const { payload } = await jwtVerify(token, key as KeyLike, { issuer, audience });
    const { sub, email, email_verified, name, tenant_id: tenantId, groups, exp } = payload as Record<string, unknown>;
    if (
      typeof sub !== 'string' ||
      typeof email !== 'string' ||
      typeof tenantId !== 'string' ||
      typeof exp !== 'number'
    ) {
      throw new Error('session token lacks sub, email, tenant_id or exp');
    }
    const claims: SessionClaims = {
      subject: sub,
      email,
      emailVerified: email_verified === true,
      name: typeof name === 'string' ? name : email,
      tenantId,
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
      expiresAt: new Date(exp * 1000),
    };
    verified.set(token, claims);
    return claims;
  };
}

/** How long a verified token's claims are reused at most (never past the token's own expiry). */
const VERIFIED_TTL_MS = 5 * 60 * 1000;
const VERIFIED_MAX = 10_000;

/**
 * Claims of tokens whose signature was checked recently, keyed by the token's SHA-256: a session
 * sends the same token on every request, and the signature check was the largest cost of one.
 * Bounded (the oldest entry goes first); an entry ends at the token's expiry, so an expired
 * token is never accepted. A key removed from the identity provider's JWKS stops tokens at the
 * latest VERIFIED_TTL_MS later.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, { claims: SessionClaims; until: number }>();

  get(token: string): SessionClaims | undefined {
    const id = sha256(token);
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (Date.now() < entry.until) return entry.claims;
    this.entries.delete(id);
    return undefined;
  }

  set(token: string, claims: SessionClaims): void {
    if (this.entries.size >= VERIFIED_MAX) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(sha256(token), {
      claims,
      until: Math.min(claims.expiresAt.getTime(), Date.now() + VERIFIED_TTL_MS),
    });
  }
}

/** Signs a session token with the local dev key (the CLI's `token` command), for `audience`. */
export async function signDevSessionToken(
  config: Config,
  claims: { subject: string; email: string; name: string; tenantId: string; groups: string[] },
  ttlSeconds: number,
  audience: string = config.auth.audience,
): Promise<string> {
  const { privateKey } = await devKeyPair(config);
  // The CLI is the operator's own identity provider: it vouches for the email it is given.
  return new SignJWT({
    email: claims.email,
    email_verified: true,
    name: claims.name,
    tenant_id: claims.tenantId,
    groups: claims.groups,
  })
    .setProtectedHeader({ alg: DEV_ALGORITHM })
    .setSubject(claims.subject)
    .setIssuer(config.auth.issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(privateKey);
}
