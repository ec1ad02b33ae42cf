import type { Middleware } from 'koa';

export const LIVENESS_PATH = '/healthz';

/** Liveness only: answers while the process serves HTTP, whatever the services' state. */
export const livenessEndpoint: Middleware = (ctx) => {
  ctx.body = { status: 'ok' };
};
