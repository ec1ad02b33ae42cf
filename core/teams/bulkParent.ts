import type { Knex } from 'knex';
import { RefusedAction } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { ApiError, invalid } from '../errors';
import { parentCycle } from './hierarchyRules';
import { lockHierarchy, recordTeamAudits } from './store';

export interface ParentChange {
  team_id: string;
  parent_id: string | null;
}

const EVENT = { eventType: 'team.updated', action: 'update' };

/**
 * Applies many parent changes at once, in the caller's transaction: all of them or none. Refused
 * when a team appears twice (400), when a team or parent is not one of the tenant's (404 naming
 * them), or when the hierarchy after every change has a cycle anywhere (409 naming its teams).
 * Each team changed gets its own audit entry. The caller drops the team list cache.
 */
export async function bulkChangeParents(
  db: Knex,
  auth: CallerPrincipal,
  changes: ParentChange[],
): Promise<{ updated: number }> {
  const duplicates = changes.map((c) => c.team_id).filter((id, i, ids) => ids.indexOf(id) !== i);
  if (duplicates.length) {
    throw invalid(
      'Each team may appear once',
      [...new Set(duplicates)].map((id) => ({ field: 'changes.team_id', message: `${id} appears more than once` })),
    );
  }
  // Serialised with every other parent change of the tenant, so none slips a cycle in meanwhile.
  await lockHierarchy(db, auth.tenantId);
  const teams = await db('teams').select<{ id: string; slug: string; parent_id: string | null }[]>(
    'id',
    'slug',
    'parent_id',
  );
  const slugs = new Map(teams.map((team) => [team.id, team.slug]));
  const named = new Set(changes.flatMap((c) => (c.parent_id ? [c.team_id, c.parent_id] : [c.team_id])));
  const unknown = [...named].filter((id) => !slugs.has(id));
  if (unknown.length) {
    throw new ApiError(
      'NOT_FOUND',
      `Team not found: ${unknown.join(', ')}`,
      unknown.map((id) => ({ field: 'changes', message: `no team ${id} in this tenant` })),
    );
  }
  const before = new Map(teams.map((team) => [team.id, team.parent_id]));
  const parents = new Map(before);
  for (const change of changes) parents.set(change.team_id, change.parent_id);
  const cycle = parentCycle(
    parents,
    changes.map((c) => c.team_id),
  );
  if (cycle) {
    const names = cycle.map((id) => slugs.get(id) as string);
    throw new RefusedAction(
      new ApiError(
        'CONFLICT',
        `These parent changes make a cycle: ${[...names, names[0]].join(' -> ')}`,
        cycle.map((id) => ({ field: 'changes', message: `${slugs.get(id)} (${id}) is in the cycle` })),
      ),
      { ...EVENT, targetType: 'team', targetId: cycle[0], metadata: { bulk_parent: true, cycle } },
    );
  }
  // A change to the parent a team already has writes and audits nothing.
  const moved = changes.filter((c) => before.get(c.team_id) !== c.parent_id);
  if (moved.length) {
    await db.raw(
      `update teams t set parent_id = c.parent_id, updated_at = now()
         from jsonb_to_recordset(cast(:moved as jsonb)) as c(team_id uuid, parent_id uuid)
        where t.id = c.team_id`,
      { moved: JSON.stringify(moved) },
    );
  }
  // One entry per team; one insert per new parent, the entries' metadata naming it.
  for (const [parentId, moves] of Map.groupBy(moved, (c) => c.parent_id)) {
    await recordTeamAudits(
      db,
      auth,
      moves.map((c) => c.team_id),
      { ...EVENT, metadata: { fields: ['parent_id'], parent_id: parentId, bulk_parent: true } },
    );
  }
  return { updated: moved.length };
}
