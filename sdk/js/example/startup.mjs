// Start-up time of the fixture: from the startRetsu() call to the first
// answered SQS request (ListQueues through @aws-sdk/client-sqs), 20 starts.
// One start before them loads the SDK's modules and is not counted.
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startRetsu } from 'retsu-sqs';

const runs = Number(process.argv[2] || 20);
async function once() {
  const t0 = process.hrtime.bigint();
  const server = await startRetsu();
  const sqs = new SQSClient({
    endpoint: server.endpoint,
    region: server.region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  await sqs.send(new ListQueuesCommand({}));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  sqs.destroy();
  await server.stop();
  return ms;
}

await once();
const times = [];
for (let i = 0; i < runs; i++) times.push(await once());
times.sort((a, b) => a - b);
const median = times.length % 2 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
console.log(`js fixture start-up (startRetsu() to first answered SQS request), ${runs} starts: ` +
  `median ${median.toFixed(1)} ms, min ${times[0].toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms`);
