import type { Config } from '../config';

// The Temporal UI's sign-in to the codec endpoint where there is no identity provider in front of
// the UI (development): `shipyard operator-login` signs a token for the audience below with the
// dev key and prints a link to the API's sign-in route, which keeps it in an HttpOnly cookie the
// browser sends to the codec endpoint only (docs/temporal-ui.md).

/**
 * The audience of sign-in tokens: the codec endpoint takes them from its cookie, and the session
 * verifier refuses them, so one is no session token anywhere else.
 */
export const codecSignInAudience = (config: Config) => `${config.auth.audience}:temporal-codec`;

/** The name of the sign-in cookie. */
export const CODEC_SIGN_IN_COOKIE = 'shipyard_temporal_codec';

/** The longest a sign-in lasts: an operator signs in again rather than holding a day-long cookie. */
export const CODEC_SIGN_IN_MAX_SECONDS = 12 * 3600;

/**
 * Where the browser reaches the API for the sign-in link: the API's port on the Temporal UI's
 * host, since the cookie is SameSite=Strict and `localhost` and `127.0.0.1` are different sites.
 */
export function apiUrlBesideTemporalUi(config: Config): string {
  const ui = new URL(config.temporal.uiUrl);
  return `${ui.protocol}//${ui.hostname}:${config.port}`;
}
