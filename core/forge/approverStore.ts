import type { Knex } from 'knex';
import { isBuiltInRole } from '../auth/permissions';
import { rolesOfUser } from '../auth/store';
import type { ErrorDetail } from '../errors';
import { UUID } from '../ids';
import { usersHolding, usersWithRoles } from '../notifications/recipients';
import { namesApprovers, type ApproverFacts, type ResolvedRule } from './approvalRules';
import type { MoldAction } from './types';

// What approver rules refer to, read in the tenant's transaction: the check of a mold's
// references when it is saved, a caller's memberships when they decide, and the users a waiting
// run notifies. References are resolved when used (a team's members as of the decision), so a
// rule follows team and role changes; a team or user deleted later simply matches no one.

const existing = (trx: Knex, table: string, column: string, values: string[]) =>
  values.length ? trx(table).whereIn(column, values).pluck<string[]>(column) : Promise.resolve([] as string[]);

/** Per action, each team slug, role or user email its approvers name that the tenant does not have. */
export async function unknownApproverReferences(trx: Knex, actions: readonly MoldAction[]): Promise<ErrorDetail[]> {
  const named = (key: 'teams' | 'roles' | 'users') => [...new Set(actions.flatMap((a) => a.approvers?.[key] ?? []))];
  const bundleIds = named('roles').filter((role) => !isBuiltInRole(role) && UUID.test(role));
  const [teams, users, bundles] = await Promise.all([
    existing(trx, 'teams', 'slug', named('teams')),
    existing(trx, 'users', 'email', named('users')),
    existing(trx, 'role_bundles', 'id', bundleIds),
  ]);
  const known = { teams: new Set(teams), users: new Set(users), roles: new Set(bundles) };
  const what = { teams: 'team', roles: 'role', users: 'user' } as const;
  const problems: ErrorDetail[] = [];
  actions.forEach((action, index) => {
    for (const key of ['teams', 'roles', 'users'] as const) {
      (action.approvers?.[key] ?? []).forEach((reference, at) => {
        if (known[key].has(reference) || (key === 'roles' && isBuiltInRole(reference))) return;
        problems.push({
          field: `body.actions.${index}.approvers.${key}.${at}`,
          message: `${what[key]} "${reference}" does not exist in this tenant`,
        });
      });
    }
  });
  return problems;
}

/** A user's email, teams (directly or through a mapped identity-provider group) and roles. */
export async function approverFacts(trx: Knex, userId: string): Promise<ApproverFacts> {
  const user = await trx('users')
    .where({ id: userId })
    .first<{ email: string; idp_groups: string[] | null } | undefined>('email', 'idp_groups');
  const groups = user?.idp_groups ?? [];
  const [teams, roles] = await Promise.all([
    trx.raw<{ rows: { slug: string }[] }>(
      `select t.slug from teams t
        where exists (select from team_members m where m.team_id = t.id and m.user_id = :userId)
          or exists (select from team_group_mappings g where g.team_id = t.id and g.group_name = any(:groups))`,
      { userId, groups },
    ),
    rolesOfUser(trx, userId, groups),
  ]);
  return { email: user?.email, teams: teams.rows.map((row) => row.slug), roles: roles.map((role) => role.key) };
}

/**
 * The users who may approve under a rule: those it names who also hold forge:write (the decision
 * routes need it), or every forge:write holder when it names no one. The starter is among them:
 * the caller leaves them out as the rule says.
 */
export async function eligibleUsers(trx: Knex, rule: ResolvedRule): Promise<string[]> {
  const writers = await usersHolding(trx, 'forge:write');
  if (!namesApprovers(rule)) return writers;
  const [named, byRole] = await Promise.all([
    trx.raw<{ rows: { id: string }[] }>(
      `select u.id from users u where u.email = any(:emails)
       union
       select m.user_id from team_members m join teams t on t.id = m.team_id where t.slug = any(:teams)
       union
       select u.id from users u join team_group_mappings g on g.group_name = any(u.idp_groups)
         join teams t on t.id = g.team_id where t.slug = any(:teams)`,
      { emails: rule.users, teams: rule.teams },
    ),
    rule.roles.length ? usersWithRoles(trx, rule.roles) : [],
  ]);
  const eligible = new Set([...named.rows.map((row) => row.id), ...byRole]);
  return writers.filter((id) => eligible.has(id));
}
