import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { Knex } from 'knex';
import { unreadSummary } from '../../core/notifications/store';
import { withTenant } from '../../db/tenancy';
import { admitStream, type ChangeFollowers } from '../http/eventStreams';

/** Unread notifications each `unread` event carries, newest first. */
export const NEWEST_UNREAD = 20;

export interface FollowedNotifications {
  tenantId: string;
  userId: string;
  /** Resolves when the stream must end: its client left, or the process is stopping. */
  closed: Promise<void>;
  /** Open streams a user may hold in this process. */
  streamsPerUser: number;
}

/**
 * Server-sent events of a user's notifications: an `unread` event `{unread_count,
 * notifications}` (the newest unread) at once, and again whenever one is added or read (woken by
 * NOTIFICATIONS_CHANNEL), until the client leaves. Each read is a short transaction of its own;
 * the stream reads no more while the client's socket is not draining.
 */
export async function openNotificationStream(
  db: Knex,
  followers: ChangeFollowers,
  { tenantId, userId, closed, streamsPerUser }: FollowedNotifications,
): Promise<PassThrough> {
  const release = admitStream('notification streams', [
    { key: `notifications:${tenantId}:${userId}`, cap: streamsPerUser, holder: 'user' },
  ]);
  const watch = followers.watch(userId, closed);
  const read = () => {
    watch.reading();
    return withTenant(db, tenantId, (trx) => unreadSummary(trx, userId, NEWEST_UNREAD));
  };
  let summary: Awaited<ReturnType<typeof read>>;
  try {
    await followers.ready();
    summary = await read();
  } catch (err) {
    watch.unfollow();
    release();
    throw err;
  }

  const stream = new PassThrough();
  void (async () => {
    try {
      while (watch.open) {
        if (!stream.write(`event: unread\ndata: ${JSON.stringify(summary)}\n\n`)) {
          await Promise.race([closed, once(stream, 'drain')]);
        }
        await watch.nextChange();
        if (!watch.open) break;
        summary = await read();
      }
    } catch (err) {
      stream.write(`event: error\ndata: ${JSON.stringify({ message: 'notification stream failed' })}\n\n`);
      stream.destroy(err as Error);
      return;
    } finally {
      watch.unfollow();
      release();
    }
    stream.end();
  })();
  return stream;
}
