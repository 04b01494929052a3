module.exports = {
  testMatch: ['**/test/*.jest.test.cjs'],
  globalSetup: 'retsu/jest/global-setup',
  globalTeardown: 'retsu/jest/global-teardown',
  testTimeout: 20000,
};
