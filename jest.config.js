/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }],
  },
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  testTimeout: 30_000,
  // Each test file's modules stay on the heap of the process that ran it (ES modules under
  // --experimental-vm-modules): in one process the heap grew by about 25 MB a file, to 1.3 GB by
  // the 38th, and the local stacks of later suites ran two to three times slower (a DynamoDB
  // write took 500 ms), enough to fail the timing-sensitive fair-share tests on CI. Past this
  // much heap after a file, the worker is replaced by a fresh one (this also makes Jest use a
  // worker on a machine with one core to spare, where it would otherwise run in its own process).
  workerIdleMemoryLimit: '512MB',
};
