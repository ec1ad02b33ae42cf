// Every workflow, bundled once per worker process. Deterministic code only: no I/O here,
// activities do it.
export { workerProbe } from './probe';
export { forgeRun } from './forgeRun';
export { reconcileForgeRuns } from './forgeReconcile';
export { pruneRetention } from './retention';
export { searchBackfill } from './searchBackfill';
export { searchCrawl, crawlTick } from './searchCrawl';
export { searchCrawlPushes } from './searchCrawl';
export { searchReindex } from './searchReindex';
export { betaGrace } from './betaGrace';
export { autoDisconnect } from './autoDisconnect';
export { apiKeyExpiryNotices } from './apiKeyExpiry';
export { databaseBackup } from './databaseBackup';
export { scoreTenant, rescoreAllTenants, initiativeDeadlines } from './scorecards';
export { integrationSync, integrationSyncTick } from './integrationSync';
export { webhookDelivery } from './webhookDelivery';
export { rollupPlatformMetrics } from './platformMetrics';
