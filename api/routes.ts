import type { RouteDefinition } from './http/route';
import { systemRoutes } from './system/routes';

/** Every domain's /api/v1 endpoints. A domain adds its routes.ts export here. */
export const apiRoutes: RouteDefinition[] = [...systemRoutes];
