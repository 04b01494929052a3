// ESM entry: the same implementation as the CommonJS one (one module
// instance, one set of error classes).
import retsu from './index.js';

export const {
  startRetsu,
  connectRetsu,
  findBinary,
  platformPackage,
  RetsuError,
  RetsuAdminError,
  REGION,
  ACCOUNT_ID,
} = retsu;
export default retsu;
