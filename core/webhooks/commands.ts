import type { Knex } from 'knex';
import type { Principal } from '../auth/principal';
import { recordAudit } from '../audit/store';
import type { Keyring } from '../crypto/keyring';
import type { EgressAllowList } from '../egress/egressRules';
import { invalid, notFound } from '../errors';
import { getIntegration } from '../integrations/store';
import { generateSecret, secretProblem, unknownEventKinds, urlRefusal } from './rules';
import { getWebhook, insertWebhook, toWebhook, updateWebhook, type WebhookRow } from './store';
import type { EventKind } from './types';

// Webhook writes: checked, stored and audited in the caller's transaction.

interface WebhookChanges {
  url?: string;
  events?: string[];
  secret?: string;
  active?: boolean;
}

/** Refuses unknown event kinds (each named), a malformed secret and a URL the egress guard would refuse. */
function checked(changes: WebhookChanges, allow: EgressAllowList): { events?: EventKind[]; secret?: string } {
  const refusal = changes.url === undefined ? undefined : urlRefusal(allow, changes.url);
  if (refusal) throw invalid(refusal, [{ field: 'body.url', message: refusal }]);
  const unknown = changes.events ? unknownEventKinds(changes.events) : [];
  if (unknown.length) {
    throw invalid(
      `Unknown event kind${unknown.length > 1 ? 's' : ''}: ${unknown.map((u) => u.kind).join(', ')}`,
      unknown.map(({ index, kind }) => ({ field: `body.events.${index}`, message: `"${kind}" is not an event kind` })),
    );
  }
  const problem = changes.secret === undefined ? undefined : secretProblem(changes.secret);
  if (problem) throw invalid(`The secret ${problem}`, [{ field: 'body.secret', message: problem }]);
  return { events: changes.events as EventKind[] | undefined, secret: changes.secret };
}

const audit = (id: string, action: string, metadata?: Record<string, unknown>) => ({
  eventType: `webhook.${action}d`,
  action,
  targetType: 'webhook',
  targetId: id,
  metadata,
});

/** A new webhook of the integration; `secret` in the answer only when it was generated. */
export async function createWebhook(
  trx: Knex,
  { keyring, allow }: { keyring: Keyring; allow: EgressAllowList },
  principal: Principal,
  integrationId: string,
  request: WebhookChanges & { url: string; events: string[] },
) {
  if (!(await getIntegration(trx, integrationId))) throw notFound('Integration');
  const { events } = checked(request, allow);
  const secret = request.secret ?? generateSecret();
  const row = await insertWebhook(trx, keyring, {
    tenantId: principal.tenantId,
    integrationId,
    url: request.url,
    events: events!,
    secret,
    active: request.active ?? true,
  });
  await recordAudit(trx, principal, audit(row.id, 'create', { integration_id: integrationId }));
  return { ...toWebhook(row), ...(request.secret === undefined && { secret }) };
}

export async function changeWebhook(
  trx: Knex,
  { keyring, allow }: { keyring: Keyring; allow: EgressAllowList },
  principal: Principal,
  id: string,
  changes: WebhookChanges,
): Promise<WebhookRow> {
  const stored = await getWebhook(trx, id);
  if (!stored) throw notFound('Webhook');
  const { events, secret } = checked(changes, allow);
  const row = await updateWebhook(trx, keyring, stored, { url: changes.url, events, secret, active: changes.active });
  await recordAudit(trx, principal, audit(id, 'update', { fields: Object.keys(changes) }));
  return row;
}
