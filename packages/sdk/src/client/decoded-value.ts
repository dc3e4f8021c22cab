import type { ResponseValue } from '../protocol/response.js';

/** What each operation decodes to, from the response table: the version, the volume's path and size, nothing. */
export type DecodedValue = ResponseValue;
