import { clusterRoutes } from './clusterRoutes';
import { resourceRoutes } from './resourceRoutes';
import { workloadRoutes } from './workloadRoutes';

/** The operations views on what the cluster agents push (docs/operations-views.md). */
export const operationsRoutes = [...workloadRoutes, ...clusterRoutes, ...resourceRoutes];
