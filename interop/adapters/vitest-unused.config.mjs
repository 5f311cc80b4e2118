// vitest for the failOnUnused spec alone (its afterAll failure would change the shared verdicts).
export default { test: { include: ["vitest-unused/**/*.test.mjs"], testTimeout: 20000, hookTimeout: 20000 } };
