export { choice, flag, text, listOf, size, mkdirMode, mkdirOwner } from './parameter-schema.js';
