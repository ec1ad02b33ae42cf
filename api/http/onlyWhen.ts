import type { Context, Middleware } from 'koa';

/**
 * `middleware` for the requests `applies` picks; every other request passes straight on. For
 * middleware most requests skip: written as one async function, each of them would pay for a
 * promise of its own on the way through.
 */
export const onlyWhen =
  (applies: (ctx: Context) => boolean, middleware: Middleware): Middleware =>
  (ctx, next) =>
    applies(ctx) ? middleware(ctx, next) : next();
