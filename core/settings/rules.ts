import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../errors';

/** The top-level keys a settings write added, removed and changed: what its audit entry records. */
export interface SettingsChange {
  added: string[];
  removed: string[];
  changed: string[];
}

/**
 * Compares two settings objects by their top-level keys. Only the keys are recorded, never
 * values: settings are free-form and may hold tokens or passwords an admin pasted in.
 */
export function settingsChange(before: Record<string, unknown>, after: Record<string, unknown>): SettingsChange {
  const added = Object.keys(after).filter((key) => !Object.hasOwn(before, key));
  const removed = Object.keys(before).filter((key) => !Object.hasOwn(after, key));
  const changed = Object.keys(after).filter(
    (key) => Object.hasOwn(before, key) && !isDeepStrictEqual(before[key], after[key]),
  );
  return { added, removed, changed };
}

/** A 413 naming the limit when the settings serialize to more than `maxBytes` of JSON. */
export function checkSettingsSize(settings: Record<string, unknown>, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(settings));
  if (bytes <= maxBytes) return;
  throw new ApiError(
    'PAYLOAD_TOO_LARGE',
    `Tenant settings are ${bytes} bytes of JSON: the limit is ${maxBytes} (SHIPYARD_SETTINGS_MAX_BYTES)`,
    [{ field: 'settings', message: `at most ${maxBytes} bytes as JSON` }],
  );
}
