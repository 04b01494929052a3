//! What a project leaving LocalStack expects of the server that replaces
//! it, beyond the endpoints the admin layer serves (`admin/localstack*.rs`):
//! `--localstack`'s defaults and LocalStack's environment variables
//! (`settings.rs`), and its init hooks with the `awslocal` shim they call
//! (`hooks.rs`, `awslocal.sh`). README: "Coming from LocalStack".

pub mod hooks;
pub mod settings;

pub use hooks::{InitHooks, Stage};
