// The repository's root folder, for scripts that read or write beside the code (.tools, .data, docs).
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../', import.meta.url));
