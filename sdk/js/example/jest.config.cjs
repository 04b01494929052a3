module.exports = {
  testMatch: ['**/test/*.jest.test.cjs'],
  globalSetup: 'retsu-sqs/jest/global-setup',
  globalTeardown: 'retsu-sqs/jest/global-teardown',
  testTimeout: 20000,
};
