// Three projects: unit tests need no services; integration and e2e talk to the real
// PostgreSQL, Elasticsearch and Temporal that `npm test` provisions first.
const transform = { '^.+\\.ts$': ['@swc/jest'] };

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    { displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'], transform, testEnvironment: 'node' },
    {
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
      globalSetup: '<rootDir>/test/support/globalSetup.ts',
    },
    {
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
      globalSetup: '<rootDir>/test/support/globalSetup.ts',
    },
  ],
};
