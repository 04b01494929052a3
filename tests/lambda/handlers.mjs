// Node.js handlers the Lambda tests (tests/lambda_node.rs) run under AWS's
// runtime interface emulator through AWS's Node.js runtime interface
// client, aws-lambda-ric. Plain handlers: no library between the event
// and the code, so what they see is what the runtime parsed from Retsu's
// request.
//
// When LAMBDA_LOG names a file, each invocation appends one line: the
// event as JSON.stringify writes it back.

import { appendFileSync } from "node:fs";

function log(event) {
  const path = process.env.LAMBDA_LOG;
  if (path) {
    appendFileSync(path, JSON.stringify(event) + "\n");
  }
}

// Succeeds with no failed items.
export const record = async (event) => {
  log(event);
  return { batchItemFailures: [] };
};

// Reports each record whose body starts with "fail" as a failed item, as a
// handler with ReportBatchItemFailures does.
export const partial = async (event) => {
  log(event);
  const batchItemFailures = event.Records.filter((r) => r.body.startsWith("fail")).map(
    (r) => ({ itemIdentifier: r.messageId }),
  );
  return { batchItemFailures };
};
