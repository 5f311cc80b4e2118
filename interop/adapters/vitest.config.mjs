// vitest for the adapter specs: plain ESM, nothing to transform.
export default { test: { include: ["vitest/**/*.test.mjs"], testTimeout: 20000, hookTimeout: 20000 } };
