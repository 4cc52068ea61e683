// The OAuth round trip's activities (workflows/oauth-connection.ts): thin adapters to
// domain/connections/attempts.ts. Each is idempotent by attempt: an attempt that already ended
// answers its recorded end, so Temporal may run any of them again.
import type { DatabasePool } from 'slonik';
import { exchangeAndStore, expireAttempt, failAttempt } from '../domain/connections/attempts.ts';
import type { AttemptFailureCode, AttemptOutcome } from '../domain/connections/attempts.ts';
import type { OAuthProvider } from '../domain/connections/provider.ts';
import type { SecretBox } from '../domain/secret-box.ts';

export type ConnectionActivityDeps = {
  db: DatabasePool;
  /** Opens the sealed code and verifier, seals the tokens; without it an exchange ends the attempt (connections_not_configured). */
  secretBox: SecretBox | null;
  /** Google's OAuth endpoints (or the loopback double in tests); without it likewise. */
  oauthProvider: OAuthProvider | null;
};

export function createConnectionActivities(deps: ConnectionActivityDeps) {
  const { db } = deps;
  return {
    /** Code → tokens → sealed connection, one step: the tokens never pass through the workflow. */
    async exchangeOAuthCode(input: { attemptId: string; sealedCode: string }): Promise<AttemptOutcome> {
      return exchangeAndStore(deps, input);
    },
    async expireOAuthAttempt(attemptId: string): Promise<AttemptOutcome | null> {
      return expireAttempt(db, attemptId);
    },
    async failOAuthAttempt(input: { attemptId: string; code: AttemptFailureCode }): Promise<AttemptOutcome | null> {
      return failAttempt(db, input.attemptId, input.code);
    },
  };
}

export type ConnectionActivities = ReturnType<typeof createConnectionActivities>;
