import type { Knex } from 'knex';
import { idOr, uuidOrNullSql } from '../ids';
import type { AuditEvent } from '../audit/store';
import { BUILT_IN_ROLES, isBuiltInRole, type BuiltInRole, type Scope } from '../auth/permissions';
import { keysetPosition, keysetStatement, readKeysetPosition, type KeysetOrder, type KeysetWindow } from '../paging';
import { statement, type Placeholders } from '../../db/statements';
import { toIso } from '../timestamps';

// Roles are referenced by key everywhere they are assigned: a built-in role's name, or a role
// bundle's id. Requests may name a bundle instead; this module turns either into the key.

export interface RoleView {
  id: string;
  name: string;
  description: string;
  permissions: Scope[];
  built_in: boolean;
}

export type AssignmentTable = 'user_roles' | 'team_roles' | 'group_roles';
export const ASSIGNMENT_TABLES: AssignmentTable[] = ['user_roles', 'team_roles', 'group_roles'];

const builtInView = (key: BuiltInRole): RoleView => ({
  id: key,
  name: key,
  description: BUILT_IN_ROLES[key].description,
  permissions: [...BUILT_IN_ROLES[key].permissions],
  built_in: true,
});

export const builtInRoleViews = (): RoleView[] => (Object.keys(BUILT_IN_ROLES) as BuiltInRole[]).map(builtInView);

/** Bundle names may not shadow a built-in role, in any letter case. */
export const isReservedRoleName = (name: string) => isBuiltInRole(name.toLowerCase());

interface BundleRow {
  id: string;
  name: string;
  description: string;
  permissions: Scope[];
  created_at: Date;
  updated_at: Date;
}

const BUNDLE_COLUMNS = ['id', 'name', 'description', 'permissions', 'created_at', 'updated_at'];

export const toBundle = (row: BundleRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  permissions: row.permissions,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
});

const bundleView = (row: Pick<BundleRow, 'id' | 'name' | 'description' | 'permissions'>): RoleView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  permissions: row.permissions,
  built_in: false,
});

const bundleViewBy = statement<BundleRow, { ref: string }, 'id' | 'name'>((q, { ref }, column) =>
  q('role_bundles').where(column, ref).first('id', 'name', 'description', 'permissions'),
);

/** The role a request refers to (built-in name, bundle id or bundle name); undefined if none. */
export async function resolveRole(db: Knex, ref: string): Promise<RoleView | undefined> {
  if (isBuiltInRole(ref)) return builtInView(ref);
  const row = await bundleViewBy.first(db, { ref }, idOr(ref, 'name'));
  return row && bundleView(row);
}

/** Bundles by name, which is unique in a tenant. */
const BUNDLE_ORDER: KeysetOrder = { columns: [{ column: 'name', kind: 'text' }], direction: 'asc' };

const bundleViewPage = keysetStatement({
  order: BUNDLE_ORDER,
  build: (q) => q('role_bundles').select('id', 'name', 'description', 'permissions'),
  toItem: bundleView,
});

/**
 * A page of every role: built-ins first, then the tenant's bundles by name. A position is a
 * role's name, which tells the two apart: a bundle may not take a built-in name.
 */
export async function listRoles(db: Knex, window: KeysetWindow) {
  const after = window.afterId === null ? null : readKeysetPosition(window.afterId, BUNDLE_ORDER.columns)[0];
  const builtIns = builtInRoleViews();
  const builtInsLeft =
    after === null
      ? builtIns
      : isBuiltInRole(after)
        ? builtIns.slice(builtIns.findIndex((role) => role.name === after) + 1)
        : [];
  const rows = builtInsLeft.map((role) => ({ id: keysetPosition([role.name]), item: role }));
  // Enough for the page and the row that tells another one exists.
  if (rows.length > window.limit) return rows;
  const bundles = await bundleViewPage(db, {
    limit: window.limit - rows.length,
    afterId: after === null || isBuiltInRole(after) ? null : window.afterId,
  });
  return [...rows, ...bundles];
}

interface AssignedRoleRow {
  key: string;
  name: string | null;
  description: string | null;
  permissions: Scope[] | null;
}

/** Which roles are listed: those one holder (`where`, column to value) has through `table`. */
interface AssignedShape {
  table: AssignmentTable;
  columns: string[];
}

/** The roles held through one assignment table, bundle details joined. */
function assignedRolesQuery(q: Knex, where: Placeholders<Record<string, string>>, { table, columns }: AssignedShape) {
  return (
    q(`${table} as a`)
      .joinRaw(`left join role_bundles b on b.id = ${uuidOrNullSql('a.role')}`)
      .where(Object.fromEntries(columns.map((column) => [`a.${column}`, where[column]])))
      // A key that is neither built-in nor a bundle cannot be assigned; skip rather than fail.
      .where((w) => w.whereIn('a.role', Object.keys(BUILT_IN_ROLES)).orWhereNotNull('b.id'))
      .select('a.role as key', 'b.name', 'b.description', 'b.permissions')
  );
}

const assignedRoleView = (row: AssignedRoleRow): RoleView =>
  isBuiltInRole(row.key)
    ? builtInView(row.key)
    : bundleView({
        id: row.key,
        name: row.name ?? '',
        description: row.description ?? '',
        permissions: row.permissions ?? [],
      });

/** In the order they were given; the key is unique per holder. */
const ASSIGNED_ORDER: KeysetOrder = {
  columns: [
    { column: 'a.created_at', kind: 'timestamp' },
    { column: 'a.role', kind: 'text' },
  ],
  direction: 'asc',
};

const allAssignedRoles = statement<AssignedRoleRow, Record<string, string>, AssignedShape>((q, where, shape) =>
  assignedRolesQuery(q, where, shape).orderBy(ASSIGNED_ORDER.columns.map((c) => c.column)),
);

/** Every role held through one assignment table, in one query. */
export async function assignedRoles(
  db: Knex,
  table: AssignmentTable,
  where: Record<string, string>,
): Promise<RoleView[]> {
  const rows = await allAssignedRoles.rows(db, where, { table, columns: Object.keys(where) });
  return rows.map(assignedRoleView);
}

const assignedRolePage = keysetStatement({
  order: ASSIGNED_ORDER,
  build: assignedRolesQuery,
  toItem: assignedRoleView,
});

/** A page of the roles held through one assignment table. */
export function assignedRolesPage(
  db: Knex,
  table: AssignmentTable,
  where: Record<string, string>,
  window: KeysetWindow,
) {
  return assignedRolePage(db, window, where, { table, columns: Object.keys(where) });
}

// ------------------------------------------------------------------ role bundles

export const listBundles = keysetStatement({
  order: BUNDLE_ORDER,
  build: (q) => q('role_bundles').select(BUNDLE_COLUMNS),
  toItem: toBundle,
});

const bundleById = statement<BundleRow, { id: string }>((q, { id }) =>
  q('role_bundles').where({ id }).first(BUNDLE_COLUMNS),
);

export async function getBundle(db: Knex, id: string) {
  const row = await bundleById.first(db, { id });
  return row && toBundle(row);
}

/** Inserts a bundle; undefined when the name is taken (the unique constraint decides, race-free). */
export async function insertBundle(
  db: Knex,
  tenantId: string,
  bundle: { name: string; description: string; permissions: readonly Scope[] },
) {
  const [row]: BundleRow[] = await db('role_bundles')
    .insert({
      tenant_id: tenantId,
      name: bundle.name,
      description: bundle.description,
      permissions: [...bundle.permissions],
    })
    .onConflict(['tenant_id', 'name'])
    .ignore()
    .returning(BUNDLE_COLUMNS);
  return row && toBundle(row);
}

export const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

export async function updateBundle(
  db: Knex,
  id: string,
  changes: { name?: string; description?: string; permissions?: readonly Scope[] },
) {
  const [row]: BundleRow[] = await db('role_bundles')
    .where({ id })
    .update({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.permissions !== undefined && { permissions: [...changes.permissions] }),
      updated_at: db.fn.now(),
    })
    .returning(BUNDLE_COLUMNS);
  return row && toBundle(row);
}

/**
 * Deletes a bundle and every assignment of it, so no user keeps a role that no longer exists.
 * Returns undefined when there is no such bundle, else what was removed.
 */
export async function deleteBundle(db: Knex, id: string) {
  const [bundle] = await db('role_bundles').where({ id }).del().returning(['id', 'name']);
  if (!bundle) return undefined;
  const users = await db('user_roles').where({ role: id }).del();
  const teamIds: string[] = (await db('team_roles').where({ role: id }).del().returning('team_id')).map(
    (row: { team_id: string }) => row.team_id,
  );
  const groups = await db('group_roles').where({ role: id }).del();
  return { name: bundle.name as string, users, teamIds, groups };
}

// ------------------------------------------------------------------ direct user assignments

const userById = statement<{ id: string }, { id: string }>((q, { id }) => q('users').where({ id }).first('id'));

export const userExists = async (db: Knex, userId: string) => (await userById.rows(db, { id: userId })).length > 0;

/** false when the user already holds the role directly. */
export async function assignUserRole(db: Knex, tenantId: string, userId: string, key: string): Promise<boolean> {
  const rows = await db('user_roles')
    .insert({ tenant_id: tenantId, user_id: userId, role: key })
    .onConflict(['user_id', 'role'])
    .ignore()
    .returning('role');
  return rows.length > 0;
}

export async function unassignUserRole(db: Knex, userId: string, key: string): Promise<boolean> {
  return (await db('user_roles').where({ user_id: userId, role: key }).del()) > 0;
}

/** The audit entry of a role given to (or taken from) a user directly or a group. */
export const roleChangeAudit = (
  holder: { type: 'user' | 'group'; id: string },
  role: RoleView,
  change: 'assigned' | 'unassigned',
): AuditEvent => ({
  eventType: `${holder.type === 'user' ? 'role' : 'group_role'}.${change}`,
  action: change === 'assigned' ? 'assign' : 'unassign',
  targetType: holder.type,
  targetId: holder.id,
  metadata: { role: role.id, role_name: role.name },
});
