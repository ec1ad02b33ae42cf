import {
  listNotifications,
  markAllRead,
  markRead,
  readPreferences,
  unreadCount,
  writePreferences,
} from '../../core/notifications/store';
import { notFound } from '../../core/errors';
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

// The caller's own notifications: every query names the caller's user, so no route reads or
// changes another user's (and RLS another tenant's). An API key acts for the user who owns it.

const TAG = 'Notifications';

export const notificationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/notifications',
    tag: TAG,
    access: 'authenticated',
    summary: "The caller's notifications, unread first, then newest first; with the number unread",
    query: notificationListQuery,
    responses: { 200: { description: '`{notifications, next_cursor, unread_count}`', schema: notificationListSchema } },
    handler: async ({ db, auth, query }) => {
      const window = shapeDWindow(query);
      const [rows, unread] = await Promise.all([
        listNotifications(db, auth.userId, window),
        unreadCount(db, auth.userId),
      ]);
      const page = shapeDPage(rows, window);
      return { notifications: page.items, next_cursor: page.next_cursor, unread_count: unread };
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
