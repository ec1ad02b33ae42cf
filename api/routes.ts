import { featureRoutes } from './admin/featureRoutes';
import { policyRoutes } from './admin/policyRoutes';
import { settingsRoutes } from './admin/settingsRoutes';
import { apiKeyRoutes } from './apiKeys/routes';
import { auditRoutes } from './audit/routes';
import { entityRoutes } from './catalog/routes';
import { statsRoutes } from './catalog/statsRoutes';
import { databaseRoutes } from './database/routes';
import { moldRoutes } from './forge/moldRoutes';
import { runRoutes } from './forge/runRoutes';
import { gitopsRoutes } from './gitops/routes';
import { governanceRoutes } from './governance/routes';
import { groupRoutes } from './groups/routes';
import type { RouteDefinition } from './http/route';
import { incidentRoutes } from './incidents/routes';
import { platformMetricsRoutes } from './insights/platformMetricsRoutes';
import { busFactorRoutes } from './insights/busFactorRoutes';
import { doraRoutes } from './insights/doraRoutes';
import { integrationRoutes } from './integrations/routes';
import { receiverRoutes } from './integrations/receiverRoutes';
import { webhookRoutes } from './integrations/webhookRoutes';
import { agentRoutes } from './k8s/agentRoutes';
import { licenseRoutes } from './license/routes';
import { manifestRoutes } from './manifests/routes';
import { notificationRoutes } from './notifications/routes';
import { operationsRoutes } from './operations/routes';
import { repositoryRoutes } from './repositories/routes';
import { roleRoutes } from './roles/routes';
import { scorecardRoutes } from './scorecards/routes';
import { searchRoutes } from './search/routes';
import { securityRoutes } from './security/routes';
import { sessionRoutes } from './session/routes';
import { systemRoutes } from './system/routes';
import { orgChartRoutes } from './teams/orgChartRoutes';
import { teamRoutes } from './teams/routes';
import { temporalCodecRoutes } from './temporalCodec/routes';
import { userRoutes } from './users/routes';

/** Every domain's /api/v1 endpoints. A domain adds its routes.ts export here. */
export const apiRoutes: RouteDefinition[] = [
  ...systemRoutes,
  ...sessionRoutes,
  ...apiKeyRoutes,
  ...auditRoutes,
  ...roleRoutes,
  ...orgChartRoutes,
  ...teamRoutes,
  ...userRoutes,
  ...groupRoutes,
  ...entityRoutes,
  ...manifestRoutes,
  ...statsRoutes,
  ...searchRoutes,
  ...repositoryRoutes,
  ...moldRoutes,
  ...runRoutes,
  ...integrationRoutes,
  ...temporalCodecRoutes,
  ...agentRoutes,
  ...licenseRoutes,
  ...gitopsRoutes,
  ...operationsRoutes,
  ...settingsRoutes,
  ...policyRoutes,
  ...featureRoutes,
  ...notificationRoutes,
  ...databaseRoutes,
  ...governanceRoutes,
  ...securityRoutes,
  ...scorecardRoutes,
  ...receiverRoutes,
  ...incidentRoutes,
  ...webhookRoutes,
  ...platformMetricsRoutes,
  ...busFactorRoutes,
  ...doraRoutes,
];
