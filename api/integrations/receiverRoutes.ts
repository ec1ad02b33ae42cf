import { invalid } from '../../core/errors';
import { receiverEvent } from '../../core/sourceHost/receiverRules';
import { authenticateDelivery, receiveDelivery } from '../../search/receiverCommands';
import { unauthorized } from '../auth/authenticate';
import type { BodyBudget } from '../http/jsonBody';
import { defineRoute } from '../http/route';
import { API_PREFIX } from '../http/router';
import { compileBody } from '../http/validation';
import type { Config } from '../../core/config';
import { receiverAnswerSchema, receiverPayloadSchemas, receiverQuery } from './receiverSchemas';

// The source-host receiver (spec, Authentication rule 9): the host's deliveries, signed with the
// integration's webhook secret instead of a bearer token. docs/source-host-receiver.md.

export const RECEIVER_PATH = '/integrations/vcs-host-a/webhook';

/**
 * A delivery's body budget: its own size limit, and no array budget below what that size holds
 * (a push lists every file its commits touched).
 */
export const receiverBodyBudget = ({ receiver }: Pick<Config, 'receiver'>): Record<string, BodyBudget> => ({
  [API_PREFIX + RECEIVER_PATH]: { limitBytes: receiver.bodyLimitBytes, jsonArrayItems: receiver.bodyLimitBytes },
});

const payloadValidators = new Map(
  Object.entries(receiverPayloadSchemas).map(([event, schema]) => [event, compileBody(schema)]),
);

/** `X-Hub-Delivery` and `X-Hub-Event`: printable, as the host sends them. */
const HEADER_VALUE = /^[\x21-\x7e]{1,100}$/;

/** A header the delivery must carry, or a 400 naming it. */
function requiredHeader(value: string, name: string): string {
  if (!HEADER_VALUE.test(value)) {
    throw invalid(`The ${name} header is required`, [
      { field: `headers.${name.toLowerCase()}`, message: 'must be 1 to 100 printable characters' },
    ]);
  }
  return value;
}

export const receiverRoutes = [
  defineRoute({
    method: 'POST',
    path: RECEIVER_PATH,
    tag: 'Integrations',
    access: 'public',
    summary:
      "The source host's webhook deliveries (`ping`, `push`, `repository`), for the integration named by `integration`. " +
      "No bearer token: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` with the integration's " +
      '`webhook_secret`. `X-Hub-Event` names the event, `X-Hub-Delivery` its id (a redelivery is answered ' +
      '`duplicate` and not processed again). See docs/source-host-receiver.md',
    query: receiverQuery,
    body: { type: 'object', description: "The host's event payload" },
    responses: {
      200: { description: 'Processed, a duplicate, or ignored', schema: receiverAnswerSchema },
      401: {
        description:
          'The signature is missing or wrong, or the integration is unknown, inactive or has no webhook_secret (one answer for all)',
      },
      413: { description: 'The body is over SHIPYARD_RECEIVER_BODY_LIMIT' },
    },
    handler: async ({ query, body, ctx, deps }) => {
      const tenantId = await authenticateDelivery(deps, {
        integrationId: query.integration,
        body: Buffer.from(ctx.request.rawBody ?? '', 'utf8'),
        signature: ctx.get('x-hub-signature-256') || undefined,
      });
      if (!tenantId) throw unauthorized();
      ctx.state.tenantId = tenantId;
      const event = requiredHeader(ctx.get('x-hub-event'), 'X-Hub-Event');
      const deliveryId = requiredHeader(ctx.get('x-hub-delivery'), 'X-Hub-Delivery');
      payloadValidators.get(event)?.(body);
      return receiveDelivery(
        deps,
        { tenantId, integrationId: query.integration, deliveryId, event, what: receiverEvent(event, body) },
        (err) =>
          ctx.state.log.warn({ err }, 'the push crawl could not be started: the crawl tick takes the repository'),
      );
    },
  }),
];
