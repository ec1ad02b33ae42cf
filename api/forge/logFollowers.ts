import type { ChangeListener } from '../../db/notifications';
import { RUN_CHANGES_CHANNEL } from '../../core/forge/runStore';
import { changeFollowers, type ChangeFollowers } from '../http/eventStreams';

/** Followers of runs: a notification names a run whose log or status changed. */
export type RunLogFollowers = ChangeFollowers;

/** The process's followers of run changes, subscribed on first use. */
export const runLogFollowers = (changes: ChangeListener): RunLogFollowers =>
  changeFollowers(changes, RUN_CHANGES_CHANNEL);
