import type { Middleware } from 'koa';
import { recordRefusal, RefusedAction } from '../../core/audit/store';
import type { Identity } from '../auth/authenticate';
import { authorize } from '../auth/authenticate';
import { invalid } from '../../core/errors';
import { createSessionVerifier, type SessionVerifier } from '../../core/auth/sessionTokens';
import { CODEC_SIGN_IN_COOKIE, codecSignInAudience } from '../../core/auth/codecSignIn';
import type { Config } from '../../core/config';
import { withTenant } from '../../db/tenancy';
import { defineRoute } from '../http/route';
import { API_PREFIX } from '../http/router';

// The sign-in of the Temporal UI to the codec endpoint without an identity provider: a link
// `shipyard operator-login` prints opens the route below, which keeps the link's token in a
// cookie that the browser sends to the codec paths only, and the middleware below takes it
// there as the caller's credentials (docs/temporal-ui.md).

/** The codec paths, and the cookie's: the browser sends it nowhere else. */
export const CODEC_PATH = `${API_PREFIX}/temporal-codec/`;
/** The calls that take the cookie: the codec itself, not the sign-in route beside it. */
const CODEC_CALL = new RegExp(`^${CODEC_PATH}(decode|encode)/?$`);

/** One verifier per configuration, made on first use: most processes never see a sign-in. */
const verifiers = new WeakMap<Config, Promise<SessionVerifier>>();

/** The identity a sign-in token names, or undefined when it is not one (forged, expired, a session token). */
async function signInIdentity(config: Config, token: string): Promise<Identity | undefined> {
  let verifier = verifiers.get(config);
  if (!verifier) {
    verifier = createSessionVerifier(config, codecSignInAudience(config));
    verifiers.set(config, verifier);
  }
  const claims = await (await verifier)(token).catch(() => undefined);
  return claims && { kind: 'user', tenantId: claims.tenantId, claims };
}

/**
 * On the codec calls without an Authorization header (the Temporal UI in a browser), the
 * sign-in cookie is the caller's credentials; the route then checks, as for a token, that it
 * names a platform operator. A header wins: the CLI's `--codec-auth`, or the access token the UI
 * passes behind an identity provider. Any other route never reads the cookie.
 */
export function temporalCodecSignInCookie(config: Config): Middleware {
  return async (ctx, next) => {
    const token = CODEC_CALL.test(ctx.path) && !ctx.get('authorization') && ctx.cookies.get(CODEC_SIGN_IN_COOKIE);
    if (token) ctx.state.identity = await signInIdentity(config, token);
    return next();
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const signedInPage = (email: string, until: Date, uiUrl: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shipyard: Temporal UI sign-in</title></head>
<body>
  <p>Signed in as ${escapeHtml(email)}: the Temporal UI shows decoded payloads in this browser until ${until.toISOString()}.</p>
  <p><a href="${escapeHtml(uiUrl)}">Open the Temporal UI</a></p>
</body>
</html>`;

export const temporalCodecSignInRoute = defineRoute({
  method: 'GET',
  path: '/temporal-codec/sign-in',
  tag: 'Admin',
  access: 'public',
  summary:
    'Signs the browser in to the codec endpoint, for the Temporal UI, with a link from `shipyard operator-login` (development)',
  query: {
    type: 'object',
    required: ['token'],
    properties: {
      token: { type: 'string', minLength: 1, maxLength: 4096, description: 'The sign-in token of the link' },
    },
    additionalProperties: false,
  },
  responses: {
    200: { description: 'Signed in: an HTML page linking to the Temporal UI', contentType: 'text/html' },
    400: { description: 'The token is not a sign-in token (a forged one, a session token), or it has expired' },
    403: { description: 'The token names someone who is not a platform operator' },
  },
  handler: async ({ query, deps, ctx }) => {
    const identity = await signInIdentity(deps.config, query.token);
    // A public route, whose only input is the link: a bad link is a bad request.
    if (identity?.kind !== 'user')
      throw invalid('This link does not sign in: it has expired, or it is no sign-in link', [
        { field: 'query.token', message: 'not a valid sign-in token' },
      ]);
    const principal = await withTenant(deps.db, identity.tenantId, (trx) =>
      deps.authenticator.principal(trx, identity),
    );
    try {
      authorize(principal, 'operator', 'GET /temporal-codec/sign-in');
    } catch (err) {
      // Audited as the router audits a refused operator route.
      if (err instanceof RefusedAction) await recordRefusal(deps.db, principal, err);
      throw err;
    }
    const { expiresAt, email } = identity.claims;
    ctx.cookies.set(CODEC_SIGN_IN_COOKIE, query.token, {
      httpOnly: true,
      sameSite: 'strict',
      path: CODEC_PATH,
      secure: ctx.secure,
      expires: expiresAt,
    });
    // The token stays out of the browser's history as far as the page goes.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    return signedInPage(email, expiresAt, deps.config.temporal.uiUrl);
  },
});
