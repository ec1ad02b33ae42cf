/** What a notification is about; each user turns each kind on or off (preferences, in-app). */
export const NOTIFICATION_KINDS = [
  'run_awaiting_approval',
  'run_ended',
  'api_key_expiring',
  'governance_action_assigned',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** What a trigger hands `notifyUsers`: a one-line title and what the notification is about. */
export interface NotificationContent {
  title: string;
  /** Ids and facts a client links with (`run_id`, `api_key_id`, …): never secrets. */
  payload: Record<string, unknown>;
  /**
   * Makes the notification once per user and key (`run:<id>:approval:<step>`): a trigger that
   * runs again, as a retried activity or a daily scan does, adds nothing.
   */
  dedupeKey?: string;
}

export interface Notification {
  id: string;
  kind: NotificationKind;
  title: string;
  payload: Record<string, unknown>;
  read_at: Date | null;
  created_at: Date;
}
