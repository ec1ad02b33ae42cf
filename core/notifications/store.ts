import type { Knex } from 'knex';
import { keysetStatement, type KeysetOrder, type KeysetWindow } from '../paging';
import { NOTIFICATION_KINDS, type Notification, type NotificationContent, type NotificationKind } from './types';

// A user's notifications and preferences; every query also names the user, so one user never
// reads or changes another's (RLS keeps tenants apart).

/**
 * Postgres channel on which a change to a user's notifications (one added, one read) is
 * announced at commit, with the user's id as payload: it wakes that user's open streams.
 */
export const NOTIFICATIONS_CHANNEL = 'shipyard_notifications';

const announce = (trx: Knex, userId: string) => trx.raw('select pg_notify(?, ?)', [NOTIFICATIONS_CHANNEL, userId]);

const COLUMNS = ['id', 'kind', 'title', 'payload', 'read_at', 'created_at'];

/** Unread first, then newest first. */
const LIST_ORDER: KeysetOrder = {
  columns: [
    { column: 'unread', kind: 'text' },
    { column: 'created_at', kind: 'timestamp' },
    { column: 'id', kind: 'uuid' },
  ],
  direction: 'desc',
};

const notificationPage = keysetStatement({
  order: LIST_ORDER,
  build: (q, values: { userId: string }) => q('notifications').where({ user_id: values.userId }).select(COLUMNS),
  toItem: (row: Notification) => row,
});

export const listNotifications = (trx: Knex, userId: string, window: KeysetWindow) =>
  notificationPage(trx, window, { userId });

export async function unreadCount(trx: Knex, userId: string): Promise<number> {
  const [{ count }] = await trx('notifications')
    .where({ user_id: userId, unread: true })
    .count<{ count: string }[]>('*');
  return Number(count);
}

/** Marks one of the user's notifications read (kept read if it was); undefined when it is not theirs. */
export async function markRead(trx: Knex, userId: string, id: string): Promise<Notification | undefined> {
  const [row] = await trx('notifications')
    .where({ id, user_id: userId })
    .update({ read_at: trx.raw('coalesce(read_at, now())') })
    .returning<Notification[]>(COLUMNS);
  if (row) await announce(trx, userId);
  return row;
}

export async function markAllRead(trx: Knex, userId: string): Promise<number> {
  const updated = await trx('notifications').where({ user_id: userId, unread: true }).update({ read_at: trx.fn.now() });
  if (updated) await announce(trx, userId);
  return updated;
}

/** The user's unread count and newest unread notifications: what a stream sends at each change. */
export async function unreadSummary(trx: Knex, userId: string, newest: number) {
  const [notifications, unread_count] = await Promise.all([
    trx('notifications')
      .where({ user_id: userId, unread: true })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(newest)
      .select<Notification[]>(COLUMNS),
    unreadCount(trx, userId),
  ]);
  return { unread_count, notifications };
}

/** Every kind with the user's choice, on by default. */
export async function readPreferences(trx: Knex, userId: string): Promise<Record<NotificationKind, boolean>> {
  const rows = await trx('notification_preferences')
    .where({ user_id: userId })
    .select<{ kind: NotificationKind; in_app: boolean }[]>('kind', 'in_app');
  const chosen = new Map(rows.map((row) => [row.kind, row.in_app]));
  return Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, chosen.get(kind) ?? true])) as Record<
    NotificationKind,
    boolean
  >;
}

export async function writePreferences(
  trx: Knex,
  tenantId: string,
  userId: string,
  inApp: Partial<Record<NotificationKind, boolean>>,
): Promise<void> {
  const rows = Object.entries(inApp).map(([kind, in_app]) => ({ tenant_id: tenantId, user_id: userId, kind, in_app }));
  if (!rows.length) return;
  await trx('notification_preferences').insert(rows).onConflict(['tenant_id', 'user_id', 'kind']).merge(['in_app']);
}

/**
 * One notification of `kind` for each of `userIds` that exists in the tenant and has not turned
 * the kind off; with a dedupe key, none for a user who already has one with that key. Each user
 * notified is announced on NOTIFICATIONS_CHANNEL. The ids of the users notified.
 */
export async function insertNotifications(
  trx: Knex,
  tenantId: string,
  userIds: string[],
  kind: NotificationKind,
  content: NotificationContent,
): Promise<string[]> {
  if (!userIds.length) return [];
  const { rows } = await trx.raw<{ rows: { user_id: string }[] }>(
    `with inserted as (
       insert into notifications (tenant_id, user_id, kind, title, payload, dedupe_key)
       select cast(:tenantId as uuid), u.id, cast(:kind as text), cast(:title as text), cast(:payload as jsonb),
              cast(:dedupeKey as text)
         from users u
        where u.id = any(:userIds)
          and not exists (
            select from notification_preferences p where p.user_id = u.id and p.kind = cast(:kind as text) and not p.in_app)
       on conflict (tenant_id, user_id, dedupe_key) do nothing
       returning user_id
     )
     select user_id, pg_notify(cast(:channel as text), user_id::text) from inserted`,
    {
      tenantId,
      kind,
      title: content.title,
      payload: JSON.stringify(content.payload),
      dedupeKey: content.dedupeKey ?? null,
      userIds,
      channel: NOTIFICATIONS_CHANNEL,
    },
  );
  return rows.map((row) => row.user_id);
}
