import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { ActivityDeps } from '../deps';
import { activeIntegrationOfType } from '../../core/integrations/store';
import { reconcileUnfinishedRuns } from '../../core/forge/runReconciliation';
import { appendLogs } from '../../core/forge/runLogStore';
import { markOpenSteps, markRun, markStep, runParameters } from '../../core/forge/runStore';
import { exchangeSlots } from '../../core/forge/slotStore';
import { notifyRunStatus } from '../../core/notifications/commands';
import { recordRunStatusEvent } from '../../core/webhooks/events';
import { commitWithoutFlush, withTenant } from '../../db/tenancy';
import {
  forgeWorkflowId,
  type LogLevel,
  type RunMarkOutcome,
  type RunStatus,
  type RunStepSpec,
  type SlotKind,
  type StepStatus,
} from '../../core/forge/types';
import { httpAction } from './apiCall';
import { runScript } from './script';
import { vcsHostAction, type VcsHostActionConfig } from './vcsHost';

interface RunRef {
  tenantId: string;
  runId: string;
}

const HEARTBEAT_MS = 1_000;

/** An action slot outlives its step's budget by this much before it frees itself (a lost holder). */
const ACTION_LEASE_MARGIN_SECONDS = 60;

/** A waiting request stays queued this many rechecks without being renewed. */
const WAITS_PER_RENEWAL = 3;

export function createForgeActivities({ db, system, temporal, config: appConfig, keyring, egress }: ActivityDeps) {
  const forgeConfig = appConfig.forge;
  const inTenant = <T>(ref: RunRef, work: (trx: Knex.Transaction) => Promise<T>) => withTenant(db, ref.tenantId, work);
  /** Writes the run's status and, in the same transaction, the notifications the change makes. */
  const markExistingRun = async (trx: Knex, { tenantId, runId }: RunRef, status: RunStatus, error?: string) => {
    const result = await markRun(trx, runId, status, error);
    // The API commits a run before starting its workflow: a run that is not there never will be.
    if (result === 'not-visible') throw ApplicationFailure.nonRetryable(`run ${runId} does not exist`, 'NoRun');
    if (result === 'written') await notifyRunStatus(trx, tenantId, runId, status);
    if (result === 'written') await recordRunStatusEvent(trx, runId, status);
    return result;
  };

  return {
    markRun(input: RunRef & { status: RunStatus; error?: string }): Promise<RunMarkOutcome> {
      return inTenant(input, (trx) => markExistingRun(trx, input, input.status, input.error));
    },
    async markStep(
      input: RunRef & { position: number; status: StepStatus; error?: string; output?: unknown },
    ): Promise<void> {
      await inTenant(input, (trx) => markStep(trx, input.runId, input.position, input.status, input));
    },
    async markOpenSteps(input: RunRef & { fromPosition: number; status: StepStatus }): Promise<void> {
      await inTenant(input, (trx) => markOpenSteps(trx, input.runId, input.fromPosition, input.status));
    },
    async appendLog(input: RunRef & { position?: number; level?: LogLevel; message: string }): Promise<void> {
      // The workflow's own lines (decisions, the cancel): a retried workflow task repeats them.
      await inTenant(input, (trx) => appendLogs(trx, input.tenantId, input.runId, [input], { once: true }));
    },

    /**
     * Gives back the run's slots of the kinds in `release` and takes (or queues for) those in
     * `acquire`, in one transaction (core/forge/slotStore.ts): the kinds granted, and the
     * workflows to wake. The workflow waits between attempts, so no worker is held while it does.
     */
    exchangeSlots(
      input: RunRef & { release: SlotKind[]; acquire: SlotKind[] },
    ): Promise<{ granted: SlotKind[]; wake: string[] }> {
      return inTenant(input, (trx) =>
        exchangeSlots(trx, {
          ...input,
          workflowId: forgeWorkflowId(input.runId),
          terms: (kind) => ({
            defaultLimit: kind === 'run' ? forgeConfig.runningRunsPerTenant : forgeConfig.actionSlotsPerTenant,
            leaseSeconds: kind === 'action' ? forgeConfig.stepBudgetSeconds + ACTION_LEASE_MARGIN_SECONDS : undefined,
            waitSeconds: forgeConfig.slotRecheckSeconds * WAITS_PER_RENEWAL,
          }),
        }),
      );
    },

    /** Ends every run whose workflow Temporal closed on its own (core/forge/runReconciliation.ts). */
    reconcileRuns(): Promise<number> {
      const context = Context.current();
      return reconcileUnfinishedRuns({ db, system, temporal }, (reconciled) => context.heartbeat(reconciled));
    },

    /**
     * Executes one action, and records its step: running as it starts, completed with its
     * output when it succeeds, each in the transaction of a log line the action writes anyway
     * (the workflow marks failures, skips and cancels). Heartbeats let a cancel reach it.
     * `startsRun`: the run's first step; the run is marked running first, and a run already
     * finished (the API ended it when its start seemed to fail) is not executed.
     * `completesRun`: its last step; the run is marked completed with it. Answers that run
     * write's outcome, as the markRun activity would, so the workflow needs no write of its own.
     */
    async runAction(
      input: RunRef & {
        step: RunStepSpec;
        /** Runs of version 3 and before carry them; later ones' are read from the run's row. */
        parameters?: Record<string, unknown>;
        startsRun?: boolean;
        completesRun?: boolean;
      },
    ): Promise<RunMarkOutcome | undefined> {
      const context = Context.current();
      const { step } = input;
      const config = step.config;
      const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      const lineOf = (message: string, level: LogLevel = 'info') => ({ position: step.position, level, message });
      /**
       * The step marked running with the line that opens its log, and the first step's run marked
       * running, in one write; true when the run had already ended. Its steps have then ended
       * too (so the step's mark changes nothing), and its log takes no line.
       */
      const markStarted = inTenant(input, async (trx) => {
        const [runWrite] = await Promise.all([
          input.startsRun ? markExistingRun(trx, input, 'running') : undefined,
          markStep(trx, input.runId, step.position, 'running'),
          appendLogs(
            trx,
            input.tenantId,
            input.runId,
            [lineOf(`${step.name}: starting ${step.type} (attempt ${context.info.attempt})`)],
            { whileRunOpen: input.startsRun },
          ),
          // Lost in a crash before the step's next write, these marks are superseded by it (the
          // retried attempt's, or the workflow's failure marks); else that write flushes them.
          commitWithoutFlush(trx),
        ]);
        return runWrite === 'already-finished';
      });
      markStarted.catch(() => {}); // awaited on every path below
      /** Lines of the action's own, after the line that opens the log. */
      const logLines = (messages: string[], level: LogLevel = 'info', cap?: { maxRunLines: number }) =>
        markStarted.then(() =>
          inTenant(input, (trx) =>
            appendLogs(
              trx,
              input.tenantId,
              input.runId,
              messages.map((message) => lineOf(message, level)),
              cap,
            ),
          ),
        );
      /** What the action answered, and the lines that close its log. */
      const perform = async (): Promise<{ output: unknown; lines: ReturnType<typeof lineOf>[] }> => {
        const parameters = input.parameters ?? (await inTenant(input, (trx) => runParameters(trx, input.runId)));
        if (!parameters) throw ApplicationFailure.nonRetryable(`run ${input.runId} does not exist`, 'NoRun');
        switch (step.type) {
          case 'api-call': {
            const result = await httpAction(
              egress,
              {
                method: String(config.method),
                url: String(config.url),
                headers: config.headers as Record<string, string> | undefined,
                body: config.body,
                timeoutSeconds: Number(config.timeout_seconds),
              },
              parameters,
              appConfig.forgeTemplates,
              context.cancellationSignal,
            );
            const truncated = result.truncated ? ' (body truncated)' : '';
            return { output: result, lines: [lineOf(`${step.name}: HTTP ${result.status}${truncated}`)] };
          }
          case 'script': {
            const result = await runScript(
              appConfig.sandbox,
              {
                tenantId: input.tenantId,
                script: String(config.script),
                timeoutSeconds: Number(config.timeout_seconds),
                maxOutputBytes: Number(config.max_output_bytes),
              },
              parameters,
              context.cancellationSignal,
              {
                output: (lines) => logLines(lines, 'info', { maxRunLines: appConfig.sandbox.logLinesPerRun }),
                notice: (line) => logLines([`${step.name}: ${line}`], 'warn'),
              },
            );
            return { output: result, lines: [] };
          }
          case 'vcs-host-a-action': {
            // The integration is read in its own short transaction, not held open over the call.
            const findIntegration = (id?: string) =>
              inTenant(input, (trx) => activeIntegrationOfType(trx, keyring, 'vcs-host-a', id));
            const result = await vcsHostAction(
              egress,
              findIntegration,
              config as unknown as VcsHostActionConfig,
              parameters,
              appConfig.forgeTemplates,
              context.cancellationSignal,
            );
            return { output: result, lines: [lineOf(`${step.name}: source host answered HTTP ${result.status}`)] };
          }
          default:
            throw ApplicationFailure.nonRetryable(
              `action type ${step.type} cannot run in this version`,
              'UnsupportedAction',
            );
        }
      };
      try {
        // The first action's start decides whether the run goes on, so the action waits for it.
        // Any other's marks go out while its action runs: should the database fail meanwhile,
        // the retried attempt repeats the action, as a failure at its completion already would.
        if (input.startsRun && (await markStarted)) return 'already-finished';
        const [started, performed] = await Promise.allSettled([markStarted, perform()]);
        if (started.status === 'rejected') throw started.reason;
        if (performed.status === 'rejected') throw performed.reason;
        const { output, lines } = performed.value;
        // The step's marks (and the last one's run ending) go out together (a pipelined connection).
        return await inTenant(input, async (trx) => {
          const [runWrite] = await Promise.all([
            input.completesRun ? markExistingRun(trx, input, 'completed') : undefined,
            appendLogs(trx, input.tenantId, input.runId, lines),
            markStep(trx, input.runId, step.position, 'completed', { output }),
          ]);
          return runWrite;
        });
      } catch (err) {
        await logLines([`${step.name}: ${(err as Error).message}`], 'error');
        throw err;
      } finally {
        clearInterval(heartbeat);
      }
    },
  };
}

export type ForgeActivities = ReturnType<typeof createForgeActivities>;
