// jest in native ESM mode, as docs/adapters.md tells users to set it up: a node environment and
// no transform (run with NODE_OPTIONS=--experimental-vm-modules).
export default {
  testEnvironment: "node",
  transform: {},
  roots: ["<rootDir>/jest"],
  testTimeout: 20000,
};
