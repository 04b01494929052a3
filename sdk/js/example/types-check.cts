import retsu = require('retsu');
import jest = require('retsu/jest');
import globalSetup = require('retsu/jest/global-setup');

export async function typedCjs(): Promise<string> {
  const s = await retsu.startRetsu({});
  await s.stop();
  void [jest.useRetsu, globalSetup.createGlobalSetup];
  return s.endpoint;
}
