//! The AWS JSON 1.0 request decoder: any body, for every action, either
//! decodes or gives an SqsError — never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retsu::api::Action;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the action, the rest is the body.
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let action = Action::ALL[pick as usize % Action::ALL.len()];
    let _ = retsu::protocol::json::decode(action, body);
});
