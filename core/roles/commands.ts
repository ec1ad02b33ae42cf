import type { Knex } from 'knex';
import { addGroupRole, removeGroupRole } from '../groups/store';
import { recordAudit, RefusedAction, type AuditEvent } from '../audit/store';
import type { Scope } from '../auth/permissions';
import type { CallerPrincipal } from '../auth/principal';
import { ApiError, conflict, invalid, notFound } from '../errors';
import { UUID } from '../ids';
import { recordTeamAudits } from '../teams/store';
import { statement } from '../../db/statements';
import {
  assignUserRole,
  deleteBundle,
  getBundle,
  insertBundle,
  isReservedRoleName,
  isUniqueViolation,
  resolveRole,
  roleChangeAudit,
  unassignUserRole,
  updateBundle,
  userExists,
  type RoleView,
} from './store';

// Role assignments to users and groups, and role bundles: each resolves, checks, writes and
// audits in the caller's transaction. Team roles live with the other team writes.

/** Who holds a role directly: a user (by id) or an identity-provider group (by name). */
export type RoleHolder = { type: 'user'; id: string } | { type: 'group'; id: string };

const holderName = (holder: RoleHolder) => (holder.type === 'user' ? 'The user' : `Group "${holder.id}"`);

async function resolveFor(db: Knex, holder: RoleHolder, ref: string): Promise<RoleView> {
  if (holder.type === 'user' && !(await userExists(db, holder.id))) throw notFound('User');
  const role = await resolveRole(db, ref);
  if (!role) throw notFound('Role');
  return role;
}

/** Gives a holder a role (a built-in name, bundle id or name); a 409, audited, when held already. */
export async function assignRole(db: Knex, auth: CallerPrincipal, holder: RoleHolder, ref: string) {
  const role = await resolveFor(db, holder, ref);
  const event = roleChangeAudit(holder, role, 'assigned');
  const added =
    holder.type === 'user'
      ? await assignUserRole(db, auth.tenantId, holder.id, role.id)
      : await addGroupRole(db, auth.tenantId, holder.id, role.id);
  if (!added) throw new RefusedAction(conflict(`${holderName(holder)} already has role "${role.name}"`), event);
  await recordAudit(db, auth, event);
  return role;
}

/** Takes a directly held role from a holder; 404 when it does not hold it. */
export async function unassignRole(db: Knex, auth: CallerPrincipal, holder: RoleHolder, ref: string): Promise<void> {
  const role = await resolveFor(db, holder, ref);
  const removed =
    holder.type === 'user'
      ? await unassignUserRole(db, holder.id, role.id)
      : await removeGroupRole(db, holder.id, role.id);
  if (!removed) {
    const directly = holder.type === 'user' ? ' directly' : '';
    throw new ApiError('NOT_FOUND', `${holderName(holder)} does not have role "${role.name}"${directly}`);
  }
  await recordAudit(db, auth, roleChangeAudit(holder, role, 'unassigned'));
}

// ------------------------------------------------------------------ role bundles

/** 400 for a uuid-shaped name, which would read as a bundle id. */
function checkNameShape(name: string | undefined): void {
  if (name !== undefined && UUID.test(name)) {
    throw invalid('A role bundle name must not look like a uuid', [
      { field: 'body.name', message: 'looks like a uuid' },
    ]);
  }
}

const nameTaken = (name: string) => `A role bundle named "${name}" already exists`;

/** A bundle of that name, other than `exceptId` when the shape says one is left out (bound only then). */
const bundleNamed = statement<{ id: string }, { name: string; exceptId?: string }, 'any' | 'except'>(
  (q, values, which) =>
    q('role_bundles')
      .where({ name: values.name })
      .modify((b) => {
        if (which === 'except') b.whereNot({ id: values.exceptId });
      })
      .first('id'),
);

/**
 * A 409 refusal (audited as a failure of `event`) when `name` is a built-in role's or another
 * bundle's name.
 */
async function requireFreeName(
  db: Knex,
  name: string | undefined,
  event: AuditEvent,
  exceptId?: string,
): Promise<void> {
  if (name === undefined) return;
  if (isReservedRoleName(name)) throw new RefusedAction(conflict(`"${name}" is a built-in role name`), event);
  const taken = await bundleNamed.first(db, exceptId ? { name, exceptId } : { name }, exceptId ? 'except' : 'any');
  if (taken) throw new RefusedAction(conflict(nameTaken(name)), event);
}

export async function createBundle(
  db: Knex,
  auth: CallerPrincipal,
  bundle: { name: string; description: string; permissions: readonly Scope[] },
) {
  checkNameShape(bundle.name);
  const event = {
    eventType: 'role_bundle.created',
    action: 'create',
    targetType: 'role_bundle',
    metadata: { name: bundle.name, permissions: bundle.permissions },
  };
  await requireFreeName(db, bundle.name, event);
  // Undefined when a concurrent request took the name since the check.
  const created = await insertBundle(db, auth.tenantId, bundle);
  if (!created) throw new RefusedAction(conflict(nameTaken(bundle.name)), event);
  await recordAudit(db, auth, {
    ...event,
    targetId: created.id,
    metadata: { name: created.name, permissions: created.permissions },
  });
  return created;
}

export async function changeBundle(
  db: Knex,
  auth: CallerPrincipal,
  id: string,
  changes: { name?: string; description?: string; permissions?: readonly Scope[] },
) {
  if (!(await getBundle(db, id))) throw notFound('Role bundle');
  checkNameShape(changes.name);
  const event = {
    eventType: 'role_bundle.updated',
    action: 'update',
    targetType: 'role_bundle',
    targetId: id,
    metadata: { fields: Object.keys(changes) },
  };
  await requireFreeName(db, changes.name, event, id);
  const bundle = await updateBundle(db, id, changes).catch((err) => {
    // A concurrent request took the name between the check and the update.
    throw isUniqueViolation(err) ? new RefusedAction(conflict(nameTaken(changes.name!)), event) : err;
  });
  if (!bundle) throw notFound('Role bundle');
  await recordAudit(db, auth, {
    ...event,
    metadata: { ...event.metadata, name: bundle.name, permissions: bundle.permissions },
  });
  return bundle;
}

/**
 * Deletes a bundle with every assignment of it, audited once for the bundle and once per team
 * that held it. Returns the ids of those teams (their cached list is the caller's to drop).
 */
export async function removeBundle(db: Knex, auth: CallerPrincipal, id: string): Promise<string[]> {
  const removed = await deleteBundle(db, id);
  if (!removed) throw notFound('Role bundle');
  await recordAudit(db, auth, {
    eventType: 'role_bundle.deleted',
    action: 'delete',
    targetType: 'role_bundle',
    targetId: id,
    metadata: {
      name: removed.name,
      user_assignments: removed.users,
      team_assignments: removed.teamIds.length,
      group_assignments: removed.groups,
    },
  });
  await recordTeamAudits(db, auth, removed.teamIds, {
    eventType: 'team.role_unassigned',
    action: 'unassign_role',
    metadata: { role: id, role_name: removed.name, reason: 'role bundle deleted' },
  });
  return removed.teamIds;
}
