export * from './plugin.js';
export * from './client.js';
export { REQUEST_SCHEMAS, readRequest, InvalidRequestError } from './protocol/request.js';
export {
  fingerprintResponseSchema,
  createResponseSchema,
  deleteResponseSchema,
  errorResponseSchema,
  type ResponseByOperation,
} from './protocol/response.js';
export { encodeResponse, encodeError } from './protocol/encode.js';
export { encodeJson, decodeJson } from './protocol/bigint-json.js';
export { parseGoJson, goMarshalStringMap, goMarshalString, goKeyMatches, goInt64, GoJsonSyntaxError, type GoJsonValue } from './go/json.js';
