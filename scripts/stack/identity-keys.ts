import { generateKeyPairSync, createPublicKey } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

/** Base58 (Bitcoin alphabet) encoding, as Restate spells request-identity public keys. */
export function base58(bytes: Uint8Array): string {
  let value = 0n
  for (const byte of bytes) value = value * 256n + BigInt(byte)
  let encoded = ''
  while (value > 0n) {
    encoded = (BASE58_ALPHABET[Number(value % 58n)] ?? '') + encoded
    value /= 58n
  }
  for (const byte of bytes) {
    if (byte !== 0) break
    encoded = `1${encoded}`
  }
  return encoded
}

/** The `publickeyv1_…` form of an ed25519 public key (PEM), which the SDK's `identityKeys` option takes. */
export function restatePublicKeyId(privateKeyPem: string): string {
  const der = createPublicKey(privateKeyPem).export({ format: 'der', type: 'spki' })
  return `publickeyv1_${base58(der.subarray(der.length - 32))}`
}

/** Loads the request-identity key pair from `folder`, generating it on first use; the private key file is made 0600. */
export async function ensureIdentityKeys(folder: string): Promise<{ privateKeyPath: string; publicKeyId: string }> {
  const privateKeyPath = join(folder, 'restate-identity.pem')
  if (!existsSync(privateKeyPath)) {
    await mkdir(folder, { recursive: true, mode: 0o700 })
    const { privateKey } = generateKeyPairSync('ed25519')
    await writeFile(privateKeyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 })
  }
  await chmod(privateKeyPath, 0o600) // readable by its owner only, also when it was written before

  return { privateKeyPath, publicKeyId: restatePublicKeyId(await readFile(privateKeyPath, 'utf8')) }
}
