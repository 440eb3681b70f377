// The generated types live once, in src/schema.d.ts (shipped with the package).
export * from '../src/schema.js';
