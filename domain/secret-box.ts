// Secrets we must be able to read back (webhook signing secrets, OAuth tokens): AES-256-GCM under
// a key id, keys from the environment (SECRETS_ENCRYPTION_KEYS="kid:base64key[,kid2:…]"; the first
// encrypts, all decrypt, so keys can be rotated). Stored form: "kid:iv.tag.ciphertext" (base64url).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError } from './errors.ts';

/** `context` is bound into the ciphertext (AES-GCM associated data): a sealed value only opens for the record it was sealed for. */
export type SecretBox = { seal: (plaintext: string, context: string) => string; open: (sealed: string, context: string) => string };

export function parseKeys(spec: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [kid, b64] = part.split(':');
    const key = Buffer.from(b64 ?? '', 'base64');
    if (!kid || key.length !== 32) throw new Error(`SECRETS_ENCRYPTION_KEYS: "${kid ?? ''}" needs a 32-byte base64 key`);
    keys.set(kid, key);
  }
  return keys;
}

export function createSecretBox(spec: string | undefined): SecretBox | null {
  if (!spec) return null;
  const keys = parseKeys(spec);
  const [currentKid, currentKey] = [...keys.entries()][0]!;
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv, { authTagLength: 16 });
      cipher.setAAD(Buffer.from(`${currentKid}:${context}`, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${currentKid}:${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${data.toString('base64url')}`;
    },
    open(sealed, context) {
      const [kid, rest] = sealed.split(':');
      const key = keys.get(kid ?? '');
      if (!key || !rest) throw new AppError('internal_error', 'A stored secret uses an unknown key id.');
      const [iv, tag, data] = rest.split('.').map((p) => Buffer.from(p, 'base64url'));
      if (!iv || iv.length !== 12 || !tag || tag.length !== 16 || !data) throw new AppError('internal_error', 'A stored secret is malformed.');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
        decipher.setAAD(Buffer.from(`${kid}:${context}`, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
      } catch {
        throw new AppError('internal_error', 'A stored secret does not open for this record.');
      }
    },
  };
}
