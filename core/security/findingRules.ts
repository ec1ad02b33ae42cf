import { createHash } from 'node:crypto';
import { conflict, type ApiError } from '../errors';
import type { FindingStatus } from './types';

// The security findings' pure rules: the status moves a PATCH may make, and the default fingerprint.

/**
 * The moves a PATCH may make from each status. Resolved and false-positive findings can only be
 * reopened: a resolution is not rewritten into another one without the finding being open again.
 */
export const FINDING_MOVES: Record<FindingStatus, readonly FindingStatus[]> = {
  open: ['acknowledged', 'resolved', 'false_positive'],
  acknowledged: ['open', 'resolved', 'false_positive'],
  resolved: ['open'],
  false_positive: ['open'],
};

/**
 * The refusal (409) of a move FINDING_MOVES does not list, or undefined when it is allowed;
 * asking for the status a finding has is no move and is allowed.
 */
export function findingMoveRefusal(from: FindingStatus, to: FindingStatus): ApiError | undefined {
  if (from === to || FINDING_MOVES[from].includes(to)) return undefined;
  return conflict(
    `A finding cannot move from ${from} to ${to}; from ${from} it can move to ${FINDING_MOVES[from].join(', ')}`,
  );
}

/**
 * The fingerprint of a finding reported without one: the same type and title are the same
 * finding of an entity. SHA-256 of the type and title (NUL-separated, so no two pairs collide
 * by concatenation), hex.
 */
export const defaultFingerprint = (type: string, title: string): string =>
  createHash('sha256').update(`${type}\u0000${title}`).digest('hex');
