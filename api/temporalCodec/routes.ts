import type { Payload } from '@temporalio/common';
import { SealedDataError } from '../../core/crypto/keyring';
import { invalid } from '../../core/errors';
import { defineRoute } from '../http/route';
import { temporalCodecSignInRoute } from './signIn';
import { codecQuerySchema, convertedPayloadsSchema, payloadsSchema, type JsonPayload } from './schemas';

// The codec endpoint of Temporal's remote codec protocol, for the Web UI and the CLI
// (`--codec-endpoint …/api/v1/temporal-codec`): it reads (and writes) any tenant's workflow
// payloads, so only platform operators may call it. One namespace's keys serve every namespace,
// so the X-Namespace header the clients send is not needed.

const fromJson = ({ metadata, data }: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value as string, 'base64')]),
  ),
  data: Buffer.from(data ?? '', 'base64'),
});

const toJson = ({ metadata, data }: Payload): Required<JsonPayload> => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  ),
  data: Buffer.from(data ?? []).toString('base64'),
});

const DIRECTIONS = {
  encode: 'Encrypt payloads as the workers do (what the UI or CLI sends to start or signal a workflow)',
  decode: 'Decrypt workflow payloads; payloads that are not encrypted come back unchanged',
} as const;

const codecRoutes = (Object.keys(DIRECTIONS) as (keyof typeof DIRECTIONS)[]).map((direction) =>
  defineRoute({
    method: 'POST',
    path: `/temporal-codec/${direction}`,
    tag: 'Admin',
    access: 'operator',
    summary: DIRECTIONS[direction],
    query: codecQuerySchema,
    body: payloadsSchema,
    responses: { 200: { description: 'The payloads, in order', schema: convertedPayloadsSchema } },
    handler: async ({ body, deps }) => {
      // Each on its own, so a payload that cannot be opened is named by its position.
      const payloads = await Promise.all(
        body.payloads.map(async (payload, index) => {
          try {
            const [converted] = await deps.payloadCodec[direction]([fromJson(payload)]);
            return toJson(converted);
          } catch (err) {
            if (!(err instanceof SealedDataError)) throw err;
            throw invalid(`Cannot ${direction} payload ${index}`, [
              { field: `body.payloads.${index}`, message: err.message },
            ]);
          }
        }),
      );
      return { payloads };
    },
  }),
);

export const temporalCodecRoutes = [...codecRoutes, temporalCodecSignInRoute];
