// Type declarations for retsu-sqs (CommonJS and ESM share these shapes).

export interface StartRetsuOptions {
  /** Start with the clock frozen (`--clock frozen`); reset() freezes it again. */
  frozenClock?: boolean;
  /** Extra command-line arguments, after the wrapper's own. `--host`/`--port` here replace the defaults. */
  args?: readonly string[];
  /** Persist to this directory (`--data-dir`); in memory when omitted. */
  dataDir?: string;
  /** A TOML configuration file (`--config`). */
  config?: string;
  /**
   * Answer TLS too (`--tls`): `endpoint` is then `https://…` and `caFile` the
   * certificate authority to trust (kept in `dataDir`, else Retsu's per-user
   * directory). Plain HTTP keeps answering on the same port.
   */
  tls?: boolean;
  /** How long to wait for the ready line, in ms (default 10000). */
  startTimeoutMs?: number;
  /** Path of the binary; otherwise RETSU_BIN, the platform package, PATH. */
  bin?: string;
  /** Extra environment variables for the retsu process. */
  env?: Record<string, string>;
  /** Working directory of the retsu process. */
  cwd?: string;
  /**
   * Stop the server when this process's parent dies (default true): a runner
   * killed with SIGKILL leaves its workers behind, and with them their servers.
   */
  stopWithParent?: boolean;
}

export interface ClockStatus {
  now_ms: number;
  now: string;
  frozen: boolean;
  offset_ms: number;
}

export interface RetsuClock {
  freeze(): Promise<ClockStatus>;
  /** Move the clock forward by `seconds` (or a duration string such as "1h30m"). */
  advance(seconds: number | string): Promise<ClockStatus>;
  resume(): Promise<ClockStatus>;
  /** The server's current time. */
  now(): Promise<Date>;
  status(): Promise<ClockStatus>;
  /** Set the time (never backwards). */
  set(when: Date | string | number): Promise<ClockStatus>;
}

export type MessageState = 'available' | 'inflight' | 'delayed';

export interface PeekedMessage {
  message_id: string;
  state: MessageState;
  body: string;
  receive_count: number;
  sent_ms: number;
  enqueued_ms: number;
  expires_ms: number;
  first_receive_ms: number | null;
  visible_at_ms: number | null;
  group_id: string | null;
  dedup_id: string | null;
  sequence_number: string | null;
  dead_letter_source_arn: string | null;
  message_attributes: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  [field: string]: unknown;
}

export interface HistoryEvent {
  seq: number;
  at_ms: number;
  kind: string;
  queue?: { name: string; region: string; account: string; arn?: string };
  [field: string]: unknown;
}

export interface MessageHistory {
  message_id: string;
  events: HistoryEvent[];
  truncated: boolean;
  current: PeekedMessage | null;
  [field: string]: unknown;
}

export interface PeekOptions {
  state?: MessageState | 'all';
  limit?: number;
}

export interface RetsuClient {
  /** e.g. http://127.0.0.1:41451 (https:// when started with `tls`) */
  readonly endpoint: string;
  /** With `tls`: the PEM file of the CA to trust for `endpoint` (e.g. an https.Agent's `ca`, or NODE_EXTRA_CA_CERTS). */
  readonly caFile?: string;
  readonly region: string;
  readonly accountId: string;
  /** `${endpoint}/${accountId}/${name}` */
  queueUrl(name: string): string;
  readonly clock: RetsuClock;
  /** Messages of a queue with their state, without changing anything. */
  peek(queueName: string, options?: PeekOptions): Promise<PeekedMessage[]>;
  history(messageId: string): Promise<MessageHistory>;
  /** Delete every queue, message and history; the clock runs again (frozen again if started frozen). */
  reset(): Promise<{ reset: true; queues_deleted: number; topics_deleted: number }>;
  /** Empty one queue, keeping its attributes. */
  resetQueue(queueName: string): Promise<{ reset: true; messages_removed: number }>;
  health(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export interface RetsuServer extends RetsuClient {
  readonly pid: number;
  readonly binary: string;
  readonly args: readonly string[];
  readonly running: boolean;
  /** The last lines retsu wrote to stderr. */
  stderr(): string;
  /** Close stdin, SIGTERM, then SIGKILL after 5 s; idempotent. */
  stop(): Promise<void>;
}

export declare class RetsuError extends Error {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stderr: string;
}

export declare class RetsuAdminError extends RetsuError {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: unknown;
}

export declare function startRetsu(options?: StartRetsuOptions): Promise<RetsuServer>;
export declare function connectRetsu(options?: string | { endpoint?: string; frozenClock?: boolean; caFile?: string }): RetsuClient;
export declare function findBinary(options?: { bin?: string; env?: Record<string, string | undefined> }): string;
export declare function platformPackage(platform?: string, arch?: string): string;
export declare const REGION: 'us-east-1';
export declare const ACCOUNT_ID: '000000000000';
