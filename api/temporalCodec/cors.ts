import type { Middleware } from 'koa';
import { onlyWhen } from '../http/onlyWhen';
import { CODEC_PATH } from './signIn';

/**
 * Lets the Temporal Web UI, a page on another origin, call the codec endpoint from the browser:
 * that origin only, with credentials, and only on the codec paths. The UI sends Content-Type and
 * X-Namespace (and Authorization when it passes its user's access token), so every call is
 * preceded by a preflight, answered here. Set before the request goes on, the headers also
 * reach 401 and 403 answers, so the UI can tell a refusal from a network failure. Every other
 * request passes straight on.
 */
export function temporalCodecCors(temporalUiUrl: string): Middleware {
  const uiOrigin = new URL(temporalUiUrl).origin;
  const allowUi: Middleware = async (ctx, next) => {
    ctx.vary('Origin');
    ctx.set({ 'Access-Control-Allow-Origin': uiOrigin, 'Access-Control-Allow-Credentials': 'true' });
    if (ctx.method !== 'OPTIONS' || !ctx.get('access-control-request-method')) return next();
    ctx.set({
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Namespace',
      'Access-Control-Max-Age': '600',
    });
    ctx.status = 204;
  };
  return onlyWhen((ctx) => ctx.path.startsWith(CODEC_PATH) && ctx.get('origin') === uiOrigin, allowUi);
}
