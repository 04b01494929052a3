//! HTTP server.
