import { invalid } from '../errors';
import type { GitopsCommandStatus, PushedGitopsResource } from './types';

/**
 * The status moves an agent may report for a command: it starts it (pending → running) or
 * reports its end, with or without having reported the start. A finished command stays finished,
 * and a command never goes back to pending.
 */
export const COMMAND_MOVES: Record<GitopsCommandStatus, readonly GitopsCommandStatus[]> = {
  pending: ['running', 'succeeded', 'failed'],
  running: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

export const canMoveCommand = (from: GitopsCommandStatus, to: GitopsCommandStatus): boolean =>
  COMMAND_MOVES[from].includes(to);

/**
 * A push names each resource once: the upsert writes one row per (namespace, kind, name), and
 * PostgreSQL refuses to update a row twice in one statement. The first repeat is the caller's 400.
 */
export function assertUniqueResources(resources: PushedGitopsResource[]): void {
  const seen = new Set<string>();
  resources.forEach((resource, index) => {
    const key = JSON.stringify([resource.namespace, resource.kind, resource.name]);
    if (seen.has(key))
      throw invalid('Duplicate resource in push', [
        { field: `resources.${index}`, message: 'names the same namespace, kind and name as an earlier resource' },
      ]);
    seen.add(key);
  });
}
