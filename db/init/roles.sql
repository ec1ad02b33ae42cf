-- Cluster-level setup, run once by a superuser (scripts/services, or the postgres container's
-- init). Three roles, as DESIGN.md's tenancy section requires. The passwords are for local
-- development only; production provisions its own roles and passes DATABASE_*_URL.
do $$
begin
  if not exists (select from pg_roles where rolname = 'shipyard_owner') then
    create role shipyard_owner login password 'shipyard_owner';
  end if;
  -- The API and activities: no superuser, not owner of anything, no BYPASSRLS.
  if not exists (select from pg_roles where rolname = 'shipyard_app') then
    create role shipyard_app login password 'shipyard_app' nosuperuser nobypassrls;
  end if;
  -- Cross-tenant reads only (search backfill).
  if not exists (select from pg_roles where rolname = 'shipyard_system') then
    create role shipyard_system login password 'shipyard_system' nosuperuser bypassrls;
  end if;
  -- GET /database/info and /database/connections read every backend's state through the system
  -- role; without this, backends of the other roles show as `unknown` (never their query text:
  -- the API does not select it). Granted once, so a second run prints no notice.
  if not pg_has_role('shipyard_system', 'pg_read_all_stats', 'member') then
    grant pg_read_all_stats to shipyard_system;
  end if;
end
$$;
