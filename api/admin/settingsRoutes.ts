import { replaceSettings } from '../../core/settings/commands';
import { readSettings } from '../../core/settings/store';
import { defineRoute } from '../http/route';
import { settingsSchema } from './schemas';

export const settingsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/settings',
    tag: 'Admin',
    access: 'admin:read',
    summary: "The tenant's settings: a free-form JSON object (`{}` until first written)",
    responses: { 200: { description: 'The settings object', schema: settingsSchema } },
    handler: ({ db }) => readSettings(db),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/settings',
    tag: 'Admin',
    access: 'admin:write',
    summary:
      "Replaces the tenant's settings object (audited with the top-level keys added, removed and changed, never their values)",
    body: settingsSchema,
    responses: {
      200: { description: 'The stored settings object', schema: settingsSchema },
      413: { description: 'The settings are over SHIPYARD_SETTINGS_MAX_BYTES as JSON (default 64 KiB)' },
    },
    handler: ({ db, auth, body, deps }) => replaceSettings(db, auth, body, deps.config.admin.settingsMaxBytes),
  }),
];
