import type { Knex } from 'knex';
import type { CallerPrincipal } from '../../core/auth/principal';
import { recordAudit, RefusedAction } from '../../core/audit/store';
import type { AppDeps } from '../deps';
import { notFound, type ApiError } from '../../core/errors';
import { dropTeamsCache } from './cache';
import { lockTeam } from '../../core/teams/store';

type TeamEvent = { eventType: string; action: string; metadata?: Record<string, unknown> };

/** A team write refused by a rule: the caller gets `error`, the team's log a failure entry. */
export const teamWriteRefused = (teamId: string, event: TeamEvent, error: ApiError) =>
  new RefusedAction(error, { ...event, targetType: 'team', targetId: teamId });

/** Every team write ends here: the tenant's cached list is dropped and the change audited. */
export async function teamChanged(
  deps: AppDeps,
  db: Knex.Transaction,
  auth: CallerPrincipal,
  teamId: string,
  event: TeamEvent,
): Promise<void> {
  await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
  await recordAudit(db, auth, { ...event, targetType: 'team', targetId: teamId });
}

/** 404 unless the team exists in the caller's tenant; held until commit so it cannot vanish. */
export async function requireTeam(db: Knex, teamId: string): Promise<void> {
  if (!(await lockTeam(db, teamId))) throw notFound('Team');
}
