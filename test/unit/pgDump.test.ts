import { libpqEnvironment } from '../../activities/pgDump';

test("a backup's connection goes to pg_dump in libpq's environment, the password in PGPASSWORD alone", () => {
  expect(libpqEnvironment('postgres://ops%40x:p%3Ass@db.internal:6543/ship%20yard?sslmode=require')).toEqual({
    PGHOST: 'db.internal',
    PGPORT: '6543',
    PGUSER: 'ops@x',
    PGPASSWORD: 'p:ss',
    PGDATABASE: 'ship yard',
    PGSSLMODE: 'require',
    PGAPPNAME: 'shipyard-backup',
    PGCONNECT_TIMEOUT: '10',
  });
});

test('a connection without a password or port leaves PGPASSWORD out and takes the default port', () => {
  const env = libpqEnvironment('postgres://ops@[::1]/shipyard');
  expect(env).toMatchObject({ PGHOST: '::1', PGPORT: '5432', PGUSER: 'ops', PGDATABASE: 'shipyard' });
  expect(env).not.toHaveProperty('PGPASSWORD');
});
