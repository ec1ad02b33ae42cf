import type { Knex } from 'knex';

// A revoked key is invalid at once (spec), in every API process. Processes cache validated keys
// and drop them on a revocation's notification, but a request can reach a process before the
// notification does; so every API-key request's transaction opens with this check (core/auth/store
// apiKeyInForce). A procedure, not a select: CALL returns no rows, so the check rides with BEGIN
// in one simple query at almost no cost. It runs under the caller's tenant, and RLS hides other
// tenants' keys. SQLSTATE 28000 (invalid_authorization_specification) becomes the API's 401.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create procedure api_key_in_force(key_id uuid)
      language plpgsql
      as $$
      begin
        if not exists (
          select from api_keys
          where id = key_id and revoked_at is null and (expires_at is null or expires_at > now())
        ) then
          raise exception 'API key % is revoked or expired', key_id using errcode = '28000';
        end if;
      end $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop procedure api_key_in_force(uuid)');
}
