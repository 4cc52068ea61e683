// Plans and what they entitle. The account's current plan is read on every request and judged
// against this table by domain/principals/admission.ts, never a value cached in a token.
import { z } from 'zod';

export const plans = ['premium', 'professional', 'developer_agent', 'team'] as const;
export const planSchema = z.enum(plans);
export type Plan = z.infer<typeof planSchema>;

export const accountStatuses = ['active', 'suspended', 'closed'] as const;
export const accountStatusSchema = z.enum(accountStatuses);
export type AccountStatus = z.infer<typeof accountStatusSchema>;

/**
 * The interfaces a personal access token can reach, and the plans that include each (the spec:
 * MCP on every plan; REST and the automation gateway need the Developer entitlement).
 */
export const interfaceEntitlements = {
  mcp: ['premium', 'professional', 'developer_agent', 'team'],
  rest: ['developer_agent', 'team'],
  automation: ['developer_agent', 'team'],
} as const satisfies Record<string, readonly Plan[]>;

export type Interface = keyof typeof interfaceEntitlements;

/** Which plans include each interface: `interfaceEntitlements` unless the app is built with another table. */
export type Entitlements = Readonly<Record<Interface, readonly Plan[]>>;

export function planIncludes(plan: Plan, iface: Interface, entitlements: Entitlements): boolean {
  return entitlements[iface].includes(plan);
}
