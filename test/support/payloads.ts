import type { Payload } from '@temporalio/common';

/** Every Payload anywhere in a workflow history (or any object): an object whose `metadata` says its encoding. */
export function payloadsIn(node: unknown, found: Payload[] = []): Payload[] {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return found;
  if ((node as Payload).metadata?.encoding) found.push(node as Payload);
  else for (const value of Object.values(node)) payloadsIn(value, found);
  return found;
}
