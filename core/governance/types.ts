// The governance actions' vocabulary, defined once for schemas, stores and the database's CHECK
// constraints (test/integration/vocabulary.test.ts holds them together).

export const ACTION_STATUSES = ['open', 'in_progress', 'resolved', 'dismissed', 'wont_fix'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/** The spec's closed states: work on the action ended. */
export const FINAL_STATUSES = ['resolved', 'dismissed', 'wont_fix'] as const satisfies readonly ActionStatus[];
/** The spec's actionable states: someone has work to do. */
export const ACTIONABLE_STATUSES = ['open', 'in_progress'] as const satisfies readonly ActionStatus[];

export const ACTION_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export type ActionPriority = (typeof ACTION_PRIORITIES)[number];

/** What opened an action: a person (`manual`) or the platform, once per source and entity. */
export const ACTION_SOURCE_TYPES = ['manual', 'finding', 'initiative', 'scorecard'] as const;
export type ActionSourceType = (typeof ACTION_SOURCE_TYPES)[number];

export interface GovernanceAction {
  id: string;
  title: string;
  description: string | null;
  type: string;
  status: ActionStatus;
  priority: ActionPriority;
  entity_id: string | null;
  entity_name: string | null;
  assigned_to: string | null;
  created_by: string;
  resolution_notes: string | null;
  /** YYYY-MM-DD */
  due_date: string | null;
  source_type: ActionSourceType;
  source_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ActionInput {
  title: string;
  type: string;
  priority: ActionPriority;
  description?: string;
  entity_id?: string;
  assigned_to?: string;
  due_date?: string;
  /** Default `manual`. */
  source_type?: ActionSourceType;
  source_id?: string;
}

export interface ActionUpdate {
  status?: ActionStatus;
  priority?: ActionPriority;
  assigned_to?: string | null;
  resolution_notes?: string | null;
  due_date?: string | null;
}

export interface ActionFilter {
  status?: ActionStatus;
  priority?: ActionPriority;
  type?: string;
  entity_id?: string;
  assigned_to?: string;
  source_type?: ActionSourceType;
  overdue?: boolean;
  closed?: boolean;
  actionable?: boolean;
}
