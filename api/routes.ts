import { apiKeyRoutes } from './apiKeys/routes';
import { auditRoutes } from './audit/routes';
import type { RouteDefinition } from './http/route';
import { sessionRoutes } from './session/routes';
import { systemRoutes } from './system/routes';

/** Every domain's /api/v1 endpoints. A domain adds its routes.ts export here. */
export const apiRoutes: RouteDefinition[] = [...systemRoutes, ...sessionRoutes, ...apiKeyRoutes, ...auditRoutes];
