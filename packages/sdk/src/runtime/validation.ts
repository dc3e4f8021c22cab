/**
 * Everything create and delete need that fingerprint must not pay for (zod and the
 * schemas built on it), in one module the runtime imports only when those run. One
 * module rather than several, so a bundle carries one deferred copy of zod.
 */
export { readRequest, InvalidRequestError } from '../protocol/request.js';
export { createResponseSchema } from '../protocol/response.js';
