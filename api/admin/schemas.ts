// Request and response schemas of the /admin settings, policies and feature-flag routes.

export const settingsSchema = {
  type: 'object',
  description: 'Free-form: any JSON object',
  additionalProperties: true,
} as const;
