import type { Scope } from './permissions';

// Who is calling, once authenticated: the shapes every layer below the HTTP one reads.

export interface UserPrincipal {
  kind: 'user';
  tenantId: string;
  userId: string;
  email: string;
  name: string;
  groups: string[];
  roles: string[];
  permissions: Set<Scope>;
  /** Runs the platform for every tenant (see `Authenticator.isOperator`). */
  operator: boolean;
  expiresAt: Date;
}

export interface ApiKeyPrincipal {
  kind: 'api_key';
  tenantId: string;
  apiKeyId: string;
  /** The user who created the key. */
  userId: string;
  permissions: Set<Scope>;
  operator: boolean;
}

export interface AgentPrincipal {
  kind: 'agent';
  tenantId: string;
  clusterId: string;
  tokenId: string;
}

/** A caller of user-facing routes. */
export type CallerPrincipal = UserPrincipal | ApiKeyPrincipal;
export type Principal = CallerPrincipal | AgentPrincipal;
