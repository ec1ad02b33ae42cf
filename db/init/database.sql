-- Per-database setup, run by a superuser inside each Shipyard database after it is created
-- with owner shipyard_owner. Tables the owner creates later are readable and writable by the
-- app role and readable by the system role, without each migration repeating grants.
grant usage on schema public to shipyard_app, shipyard_system;
alter default privileges for role shipyard_owner in schema public
  grant select, insert, update, delete on tables to shipyard_app;
alter default privileges for role shipyard_owner in schema public
  grant usage, select on sequences to shipyard_app;
alter default privileges for role shipyard_owner in schema public
  grant select on tables to shipyard_system;
