//! The receipt-handle parser: any string is refused or parsed, never a
//! panic; a handle the engine made parses back to what it names, and no
//! mutation of it verifies under the same key unless it is the same handle.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retsu::engine::{make_receipt_handle, parse_receipt_handle};

const SECRET: &[u8] = b"fuzzing secret";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(receipt) = parse_receipt_handle(&text, SECRET) {
        // Only a handle this key made can verify, and it names `receipt`.
        assert_eq!(make_receipt_handle(receipt, SECRET), text);
    }
    if data.len() >= 24 {
        let n = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
        let receipt = (n(0), n(8), n(16));
        let handle = make_receipt_handle(receipt, SECRET);
        assert_eq!(parse_receipt_handle(&handle, SECRET), Some(receipt));
        assert_eq!(parse_receipt_handle(&handle, b"another secret"), None);
    }
});
