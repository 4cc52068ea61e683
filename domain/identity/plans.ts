// Plans and what they entitle. The account's current plan is read on every request, so these
// checks run against live data, never a value cached in a token.
import { z } from 'zod';
import { AppError } from '../errors.ts';

export const plans = ['premium', 'professional', 'developer_agent', 'team'] as const;
export const planSchema = z.enum(plans);
export type Plan = z.infer<typeof planSchema>;

export const accountStatuses = ['active', 'suspended', 'closed'] as const;
export const accountStatusSchema = z.enum(accountStatuses);
export type AccountStatus = z.infer<typeof accountStatusSchema>;

/** The interfaces a personal access token can reach, and the plans that include each. */
export const interfaceEntitlements = {
  mcp: ['premium', 'professional', 'developer_agent', 'team'],
  rest: ['developer_agent', 'team'],
  automation: ['developer_agent', 'team'],
} as const satisfies Record<string, readonly Plan[]>;

export type Interface = keyof typeof interfaceEntitlements;

/** Which plans include each interface: `interfaceEntitlements` unless the app is built with another table. */
export type Entitlements = Readonly<Record<Interface, readonly Plan[]>>;

export function planIncludes(plan: Plan, iface: Interface, entitlements: Entitlements = interfaceEntitlements): boolean {
  return entitlements[iface].includes(plan);
}

export function assertEntitled(account: { plan: Plan; status: AccountStatus }, iface: Interface, entitlements: Entitlements = interfaceEntitlements): void {
  if (account.status !== 'active') {
    throw new AppError('account_inactive', `The account is ${account.status}.`);
  }
  if (!planIncludes(account.plan, iface, entitlements)) {
    const needed = entitlements[iface].join(', ');
    throw new AppError('entitlement_required', `The ${account.plan} plan does not include the ${iface} interface (needs one of: ${needed}).`, {
      extensions: { plan: account.plan, requiredPlans: entitlements[iface] },
    });
  }
}
