/**
 * `@dhv/sdk`: the plugin side (the runtime, the protocol's names and types, the helpers
 * a plugin uses) and the protocol pieces both sides share that load nothing heavy. The
 * agent side (running plugins, decoding what they print) is `@dhv/sdk/client`; this
 * entry never loads it, so a plugin cannot reach it by accident.
 */
export * from './plugin.js';
export { readRequest, InvalidRequestError } from './protocol/request.js';
export { encodeResponse, encodeError } from './protocol/encode.js';
export { encodeJson } from './protocol/bigint-json.js';
