// The vocabulary of cluster agents, shared by schemas, stores and rules.

export const AGENT_STATUSES = ['active', 'stale', 'offline'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** An agent as the API shows it (the spec's Agent). */
export interface Agent {
  cluster_id: string;
  display_name: string;
  environment: string | null;
  region: string | null;
  status: AgentStatus;
  last_heartbeat: Date | null;
  agent_version: string | null;
  node_count: number;
  workload_count: number;
  created_at: Date;
}

export interface AgentRegistration {
  cluster_id: string;
  display_name: string;
  environment?: string;
  region?: string;
}

export interface PushedWorkload {
  name: string;
  namespace: string;
  kind: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  replicas?: number;
  ready_replicas?: number;
  images?: string[];
  conditions?: { type: string; status: string; reason?: string }[];
}

export interface PushSummary {
  received: number;
  created: number;
  updated: number;
  gone: number;
  deployments: number;
}

export interface PushedFlow {
  source_namespace: string;
  source_name: string;
  destination_namespace: string;
  destination_name: string;
  port: number;
  protocol: string;
  count: number;
}
