import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { sessionToken } from './harness';

// What the platform-administration tests set up behind the API: a tenant with an admin, an
// editor and a viewer (session tokens and user ids), and a look at its audit entries.

export interface AdminTenant {
  tenantId: string;
  slug: string;
  admin: string;
  adminId: string;
  editor: string;
  editorId: string;
  viewer: string;
  viewerId: string;
}

export async function adminTenant(label: string): Promise<AdminTenant> {
  const slug = `${label}-${randomUUID().slice(0, 8)}`;
  const user = (role: string) => sessionToken({ tenant: slug, email: `${role}@${slug}.test`, roles: [role] });
  const admin = await user('admin');
  const [editor, viewer] = await Promise.all([user('editor'), user('viewer')]);
  return {
    tenantId: admin.tenantId,
    slug,
    admin: admin.token,
    adminId: admin.userId,
    editor: editor.token,
    editorId: editor.userId,
    viewer: viewer.token,
    viewerId: viewer.userId,
  };
}

export interface AuditEntry {
  event_type: string;
  status: string;
  target_id: string | null;
  metadata: Record<string, unknown>;
}

/** The tenant's audit entries of `eventType`, oldest first. */
export function auditEntries(db: Knex, tenantId: string, eventType: string): Promise<AuditEntry[]> {
  return withTenant(db, tenantId, (trx) =>
    trx('audit_log')
      .where({ event_type: eventType })
      .orderBy('id')
      .select('event_type', 'status', 'target_id', 'metadata'),
  );
}
