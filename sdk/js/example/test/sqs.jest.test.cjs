// Jest: one server for the run (retsu-sqs/jest/global-setup), reached through
// useSharedRetsu, reset before each test.
const { CreateQueueCommand, ListQueuesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } =
  require('@aws-sdk/client-sqs');
const { useSharedRetsu } = require('retsu-sqs/jest');

const retsu = useSharedRetsu();
const sqs = () => new SQSClient({
  endpoint: retsu.endpoint,
  region: retsu.region,
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});
const receive = async (client, url) => (await client.send(new ReceiveMessageCommand({
  QueueUrl: url, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['ApproximateReceiveCount'],
}))).Messages || [];

test('the global setup published the endpoint', () => {
  expect(process.env.RETSU_ENDPOINT).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});

test('a message returns after its visibility timeout with ApproximateReceiveCount 2', async () => {
  const client = sqs();
  await retsu.clock.freeze();
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'jest-jobs', Attributes: { VisibilityTimeout: '30' } }));
  await client.send(new SendMessageCommand({ QueueUrl, MessageBody: 'from jest' }));
  expect((await receive(client, QueueUrl))[0].Attributes.ApproximateReceiveCount).toBe('1');
  expect(await receive(client, QueueUrl)).toEqual([]);
  await retsu.clock.advance(31);
  const [again] = await receive(client, QueueUrl);
  expect(again.Body).toBe('from jest');
  expect(again.Attributes.ApproximateReceiveCount).toBe('2');
  expect((await retsu.peek('jest-jobs'))[0].receive_count).toBe(2);
});

test('the reset before this test removed the previous test\'s queue', async () => {
  const listed = await sqs().send(new ListQueuesCommand({}));
  expect(listed.QueueUrls || []).toEqual([]);
  expect((await retsu.clock.status()).frozen).toBe(false);
});
