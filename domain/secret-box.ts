// Secrets we must be able to read back (webhook signing secrets, OAuth tokens): AES-256-GCM under
// a key id, keys from the environment (SECRETS_ENCRYPTION_KEYS="kid:base64key[,kid2:…]"; the first
// encrypts, all decrypt, so keys can be rotated). Stored form: "kid:iv.tag.ciphertext" (base64url).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError } from './errors.ts';

export type SecretBox = { seal: (plaintext: string) => string; open: (sealed: string) => string };

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
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${currentKid}:${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${data.toString('base64url')}`;
    },
    open(sealed) {
      const [kid, rest] = sealed.split(':');
      const key = keys.get(kid ?? '');
      if (!key || !rest) throw new AppError('internal_error', 'A stored secret uses an unknown key id.');
      const [iv, tag, data] = rest.split('.').map((p) => Buffer.from(p, 'base64url'));
      const decipher = createDecipheriv('aes-256-gcm', key, iv!);
      decipher.setAuthTag(tag!);
      return Buffer.concat([decipher.update(data!), decipher.final()]).toString('utf8');
    },
  };
}
