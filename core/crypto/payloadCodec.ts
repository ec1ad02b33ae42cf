import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { SealedDataError, type Keyring } from './keyring';

// What Temporal stores of our workflows (inputs, results, signals, failures) is ciphertext: the
// Web UI and anyone with access to the server see no tenant data. Every client and worker uses
// `encryptedDataConverter`; operators read runs through the codec endpoint (api/temporalCodec).

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
/** For bundleWorkflowCode too: failures raised inside workflow code are encoded there. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failureConverter');

const bytes = (text: string) => Buffer.from(text, 'utf8');
const text = (value: Uint8Array | null | undefined) => (value ? Buffer.from(value).toString('utf8') : undefined);

/**
 * AES-256-GCM over the whole serialized payload (its metadata too, which names its encoding).
 * The result says `binary/encrypted` and which key sealed it; decoding picks that key, and lets
 * a payload that is not encrypted through unchanged.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const { keyId, data } = this.keyring.seal(temporal.api.common.v1.Payload.encode(payload).finish());
      return { metadata: { encoding: bytes(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: bytes(keyId) }, data };
    });
  }

  /** Throws SealedDataError for a payload that names no key, an unknown key, or was altered. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
      if (!keyId) throw new SealedDataError(`an encrypted payload without ${KEY_ID_METADATA} metadata`);
      const opened = this.keyring.open({ keyId, data: Buffer.from(payload.data ?? []) });
      return temporal.api.common.v1.Payload.decode(opened);
    });
  }
}

/** For every Temporal client and worker: payloads through the codec, failure texts encoded. */
export function encryptedDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}
