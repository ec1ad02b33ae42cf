// The GitOps vocabulary, defined once for schemas, stores and the database's CHECK constraints
// (test/integration/vocabulary.test.ts holds them together).

export const GITOPS_COMMAND_ACTIONS = ['sync', 'refresh'] as const;
export type GitopsCommandAction = (typeof GITOPS_COMMAND_ACTIONS)[number];

export const GITOPS_COMMAND_STATUSES = ['pending', 'running', 'succeeded', 'failed'] as const;
export type GitopsCommandStatus = (typeof GITOPS_COMMAND_STATUSES)[number];

/** The label (or annotation) of a pushed GitOps resource that names the entity it deploys. */
export const SERVICE_ID_LABEL = 'shipyard.dev/service-id';

/** One GitOps resource as an agent pushes it (POST /k8s/gitops/push). */
export interface PushedGitopsResource {
  namespace: string;
  kind: string;
  name: string;
  tool?: string | null;
  sync_status?: string | null;
  health_status?: string | null;
  revision?: string | null;
  source_url?: string | null;
  source_path?: string | null;
  labels?: Record<string, string>;
}
