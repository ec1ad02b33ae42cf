import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { runLogFollowers } from '../../api/forge/logFollowers';
import { ChangeListener } from '../../db/notifications';
import { testConfig } from '../support/harness';
import { until } from '../support/processes';

// Log followers and the LISTEN connection that wakes them: a lost connection makes them re-read
// (its notifications are gone), while the listener closed at shutdown starts no reads.

const { appUrl } = testConfig().database;

/** Ends the backends of `applicationName` from the server's side, as a restart or a cut would. */
async function endBackends(applicationName: string): Promise<number> {
  const client = new Client({ connectionString: appUrl });
  await client.connect();
  try {
    // A role may end its own sessions: the app role needs no privilege for this.
    const { rowCount } = await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [applicationName],
    );
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}

test('a lost LISTEN connection wakes each follower once to re-read; closing the listener for good wakes none', async () => {
  // Named, so that only this listener's backend is ended, not those of suites running beside it.
  const applicationName = `log-followers-${randomUUID()}`;
  const url = new URL(appUrl);
  url.searchParams.set('application_name', applicationName);
  const changes = new ChangeListener(url.href, pino({ level: 'silent' }));
  await changes.start();
  try {
    const followers = runLogFollowers(changes);
    await followers.ready();
    const woken = new Map<string, number>();
    for (const runId of [randomUUID(), randomUUID()]) {
      followers.follow(runId, () => woken.set(runId, (woken.get(runId) ?? 0) + 1));
    }

    expect(await endBackends(applicationName)).toBe(1);
    await until('both followers woken', 10, async () => (woken.size === 2 ? true : undefined));
    expect([...woken.values()]).toEqual([1, 1]);
    expect(followers.rereadAfterMs).not.toBeNull();
    await until('the listener back', 10, async () => (changes.listening ? true : undefined));
    expect(followers.rereadAfterMs).toBeNull();

    woken.clear();
    await changes.close();
    expect(woken.size).toBe(0);
  } finally {
    await changes.close();
  }
});
