// An operator acting on one installation's records sees them as the installation would: its
// organization and id, with no principal or request of its own (the domain's caller shape).
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';

export async function installationCaller(db: CommonQueryMethods, installationId: string) {
  const row = await db.maybeOne(sql.type(z.object({ organizationId: z.uuid() }))`
    SELECT organization_id AS "organizationId" FROM product_installations WHERE id = ${installationId}`);
  if (!row) throw new AppError('installation_not_found');
  return { organizationId: row.organizationId, installationId, servicePrincipalId: '', requestId: 'ops' };
}
