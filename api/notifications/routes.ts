import {
  NOTIFICATIONS_CHANNEL,
  listNotifications,
  markAllRead,
  markRead,
  readPreferences,
  unreadCount,
  writePreferences,
} from '../../core/notifications/store';
import { notFound } from '../../core/errors';
import { changeFollowers, endOfStream } from '../http/eventStreams';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import {
  notificationListQuery,
  notificationListSchema,
  notificationParams,
  notificationSchema,
  preferencesSchema,
  readAllSchema,
  updatePreferencesSchema,
} from './schemas';
import { openNotificationStream } from './stream';

// The caller's own notifications: every query names the caller's user, so no route reads or
// changes another user's (and RLS another tenant's). An API key acts for the user who owns it.

const TAG = 'Notifications';

export const notificationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/notifications',
    tag: TAG,
    access: 'authenticated',
    summary:
      "The caller's notifications, unread first, then newest first, with the number unread; with follow=true, a server-sent event stream of changes",
    query: notificationListQuery,
    // A stream outlives the request: it opens a short transaction per read.
    transaction: 'on-demand',
    responses: {
      200: {
        description:
          '`{notifications, next_cursor, unread_count}`. With follow=true instead `text/event-stream`: an `unread` ' +
          'event `{unread_count, notifications}` (the newest 20 unread) at once and whenever a notification of the ' +
          'caller is added or read, until the client leaves; `limit` and `cursor` do not apply. Each API process ' +
          'allows SHIPYARD_NOTIFICATION_STREAMS_PER_USER (default 3) open streams per user; one more is a 429.',
        schema: notificationListSchema,
        contentType: 'text/event-stream',
      },
      429: { description: 'The user already holds its limit of open notification streams' },
    },
    handler: async ({ auth, query, deps, ctx, inTenant }) => {
      if (!query.follow) {
        const window = shapeDWindow(query);
        const [rows, unread] = await inTenant((trx) =>
          Promise.all([listNotifications(trx, auth.userId, window), unreadCount(trx, auth.userId)]),
        );
        const page = shapeDPage(rows, window);
        return { notifications: page.items, next_cursor: page.next_cursor, unread_count: unread };
      }
      const stream = await openNotificationStream(deps.db, changeFollowers(deps.changes, NOTIFICATIONS_CHANNEL), {
        tenantId: auth.tenantId,
        userId: auth.userId,
        closed: endOfStream(ctx.req, deps.stopping.signal),
        streamsPerUser: deps.config.admin.notificationStreamsPerUser,
      });
      ctx.type = 'text/event-stream';
      ctx.set('Cache-Control', 'no-cache');
      ctx.req.socket.setTimeout(0);
      // The declared schema types the JSON form; the event stream is the documented alternative.
      return stream as unknown as { notifications: []; next_cursor: string; unread_count: number };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/notifications/{id}/read',
    tag: TAG,
    access: 'authenticated',
    summary: 'Marks one of the caller’s notifications read (again is harmless)',
    params: notificationParams,
    optionalBody: true,
    body: { type: 'object', properties: {}, additionalProperties: false },
    responses: {
      200: { description: 'The notification', schema: notificationSchema },
      404: { description: 'The caller has no notification with that id' },
    },
    handler: async ({ db, auth, params }) => {
      const notification = await markRead(db, auth.userId, params.id);
      if (!notification) throw notFound('Notification');
      return notification;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/notifications/read-all',
    tag: TAG,
    access: 'authenticated',
    summary: 'Marks every unread notification of the caller read',
    optionalBody: true,
    body: { type: 'object', properties: {}, additionalProperties: false },
    responses: { 200: { description: '`{updated}`', schema: readAllSchema } },
    handler: async ({ db, auth }) => ({ updated: await markAllRead(db, auth.userId) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/notifications/preferences',
    tag: TAG,
    access: 'authenticated',
    summary: "The caller's choice per event kind: in-app on or off (on until turned off)",
    responses: { 200: { description: '`{in_app: {kind: on}}`', schema: preferencesSchema } },
    handler: async ({ db, auth }) => ({ in_app: await readPreferences(db, auth.userId) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/notifications/preferences',
    tag: TAG,
    access: 'authenticated',
    summary: 'Turns event kinds on or off in the app for the caller; kinds left out stay as they are',
    body: updatePreferencesSchema,
    responses: {
      200: { description: 'Every kind’s choice', schema: preferencesSchema },
      400: { description: 'An unknown event kind, or a value that is not a boolean' },
    },
    handler: async ({ db, auth, body }) => {
      await writePreferences(db, auth.tenantId, auth.userId, body.in_app);
      return { in_app: await readPreferences(db, auth.userId) };
    },
  }),
];
