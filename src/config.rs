//! Server configuration (owned by the protocol/server work).
