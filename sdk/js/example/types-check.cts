import retsu = require('retsu-sqs');
import jest = require('retsu-sqs/jest');
import globalSetup = require('retsu-sqs/jest/global-setup');

export async function typedCjs(): Promise<string> {
  const s = await retsu.startRetsu({});
  await s.stop();
  void [jest.useRetsu, globalSetup.createGlobalSetup];
  return s.endpoint;
}
