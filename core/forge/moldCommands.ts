import type { Knex } from 'knex';
import type { CallerPrincipal } from '../auth/principal';
import { actorOf, recordAudit } from '../audit/store';
import { conflict, invalid, notFound } from '../errors';
import { unknownApproverReferences } from './approverStore';
import { moldProblems } from './moldRules';
import { deleteMold, findMold, insertMold, setPublished, updateMold, type Mold } from './moldStore';
import type { CreateMoldRequest, UpdateMoldRequest } from './types';

// Writing molds: each change checked by the rules, stored and audited in the caller's
// transaction, so the audit entry commits or rolls back with the change.

/** A 400 naming every problem: the rules', then approver references the tenant does not have. */
async function rejectInvalidMold(trx: Knex, mold: Parameters<typeof moldProblems>[0]): Promise<void> {
  const problems = moldProblems(mold);
  if (!problems.length) problems.push(...(await unknownApproverReferences(trx, mold.actions ?? [])));
  if (problems.length) throw invalid('Invalid mold', problems);
}

const auditMold = (trx: Knex, caller: CallerPrincipal, action: string, eventType: string, slug: string) =>
  recordAudit(trx, caller, { eventType, action, targetType: 'mold', targetId: slug });

/** A new, unpublished mold; its slug is unique in the tenant (409). */
export async function createMold(trx: Knex, caller: CallerPrincipal, request: CreateMoldRequest): Promise<Mold> {
  await rejectInvalidMold(trx, request);
  const mold = await insertMold(trx, caller.tenantId, actorOf(caller).actor, request);
  if (!mold) throw conflict(`A mold with slug "${request.slug}" already exists`);
  await auditMold(trx, caller, 'create', 'mold.created', mold.slug);
  return mold;
}

/** A partial change, checked as the whole mold it makes; the version goes up. */
export async function changeMold(
  trx: Knex,
  caller: CallerPrincipal,
  slug: string,
  changes: UpdateMoldRequest,
): Promise<Mold> {
  const current = await findMold(trx, slug);
  if (!current) throw notFound('Mold');
  await rejectInvalidMold(trx, {
    parameters: changes.parameters ?? current.parameters,
    actions: changes.actions ?? current.actions,
    requires_approval: changes.requires_approval ?? current.requires_approval,
  });
  const mold = await updateMold(trx, slug, changes);
  if (!mold) throw notFound('Mold');
  await auditMold(trx, caller, 'update', 'mold.updated', slug);
  return mold;
}

export async function publishMold(
  trx: Knex,
  caller: CallerPrincipal,
  slug: string,
  action: 'publish' | 'unpublish',
): Promise<Mold> {
  const mold = await setPublished(trx, slug, action === 'publish');
  if (!mold) throw notFound('Mold');
  await auditMold(trx, caller, action, `mold.${action}ed`, slug);
  return mold;
}

/** Its runs stay, with the copy of the mold they started with. */
export async function removeMold(trx: Knex, caller: CallerPrincipal, slug: string): Promise<void> {
  if (!(await deleteMold(trx, slug))) throw notFound('Mold');
  await auditMold(trx, caller, 'delete', 'mold.deleted', slug);
}
