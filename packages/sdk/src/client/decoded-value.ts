import type { Operation } from '../protocol/operations.js';

/** What each operation decodes to: the version, the volume's path and size, nothing. */
export interface DecodedValue {
  fingerprint: { version: string; rawVersion: string };
  create: { path: string; bytes: bigint };
  delete: Record<never, never>;
}

/** Only what the operation decodes to, picked from what its decoder gave. */
export function decodedValue<Op extends Operation>(operation: Op, decoded: object): DecodedValue[Op] {
  const r = decoded as { version?: string; rawVersion?: string; path?: string; bytes?: bigint };
  switch (operation) {
    case 'fingerprint':
      return { version: r.version!, rawVersion: r.rawVersion! } as DecodedValue[Op];
    case 'create':
      return { path: r.path!, bytes: r.bytes! } as DecodedValue[Op];
    default:
      return {} as DecodedValue[Op];
  }
}
