import { createHash } from 'node:crypto';
import { conflict } from '../errors';
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

/** Refuses (409) a move FINDING_MOVES does not list; asking for the status a finding has is no move and passes. */
export function assertFindingMove(from: FindingStatus, to: FindingStatus): void {
  if (from === to || FINDING_MOVES[from].includes(to)) return;
  const allowed = FINDING_MOVES[from].join(', ');
  throw conflict(`A finding cannot move from ${from} to ${to}; from ${from} it can move to ${allowed}`);
}

/**
 * The fingerprint of a finding reported without one: the same type and title are the same
 * finding of an entity. SHA-256 of the type and title (NUL-separated, so no two pairs collide
 * by concatenation), hex.
 */
export const defaultFingerprint = (type: string, title: string): string =>
  createHash('sha256').update(`${type}\u0000${title}`).digest('hex');
