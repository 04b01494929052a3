// startRetsu({ tls: true }): the AWS SDK for JavaScript over https://,
// trusting the CA Retsu made (an https.Agent's `ca`), plain HTTP still
// answering on the same port, and the admin API as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient, CreateQueueCommand, SendMessageCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { startRetsu } from 'retsu-sqs';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

test('the SDK over TLS with the CA trusted; plain HTTP on the same port', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'retsu-tls-'));
  const server = await startRetsu({ tls: true, dataDir });
  try {
    assert.match(server.endpoint, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(server.caFile, join(dataDir, 'tls', 'ca.pem'));
    const sqs = new SQSClient({
      endpoint: server.endpoint,
      region: server.region,
      credentials,
      requestHandler: { httpsAgent: new Agent({ ca: readFileSync(server.caFile) }) },
    });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'sealed' }));
    assert.equal(QueueUrl, server.queueUrl('sealed'));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'over tls' }));
    const [peeked] = await server.peek('sealed');
    assert.equal(peeked.body, 'over tls');

    const plainEndpoint = server.endpoint.replace('https:', 'http:');
    const plain = new SQSClient({ endpoint: plainEndpoint, region: server.region, credentials });
    const { QueueUrls } = await plain.send(new ListQueuesCommand({}));
    assert.deepEqual(QueueUrls, [`${plainEndpoint}/${server.accountId}/sealed`]);

    // A client that does not trust the CA is refused.
    const untrusting = new SQSClient({ endpoint: server.endpoint, region: server.region, credentials, maxAttempts: 1 });
    await assert.rejects(untrusting.send(new ListQueuesCommand({})));
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
