//! `kubectl-microservice`: the controller for the `Microservice` custom resource
//! (`microservices.platform.example.io/v1alpha1`) and diagnostics that explain from the
//! cluster's own evidence what happened to a Microservice.
//!
//! Layout (one line per module and file: CONTRIBUTING.md): [`cli`] (flags and help text), [`app`]
//! (dispatch) and [`error`] (errors → exit codes), [`resource`] (the CRD and the watched type),
//! [`operate`] (the controller), [`commands`] (the other subcommands), [`install`] (the install
//! model `manifests` prints and the fixes quote), [`evidence`] (snapshots from the API or a
//! bundle), [`diagnose`] (pure verdicts), [`kopf`] (Kopf's formats and vocabulary), [`logs`]
//! (operator logs as evidence), [`render`] (tables, colour, `-o` formats, JSON/YAML documents),
//! [`selector`] (label selectors), [`client`] (kubeconfig → `kube::Client`), [`text`] (escaping
//! of cluster-sourced text), [`yaml`] (YAML as every output writes it), [`time`] (the one jiff ↔
//! chrono boundary), [`vocab`] (the shared vocabulary at the bottom: cause, handler outcome,
//! Lease identity and timing, Kopf's keys).

// stdout and stderr are written through `commands::write_stdout`/`write_stderr`/`say` and the
// renderers' writers: `println!`/`eprintln!` panic on a closed pipe (`| head`, `2>&1 | tee` after
// Ctrl-C), which would turn any answer's exit code into 101.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod cli;
pub mod client;
pub mod commands;
pub mod error;
pub mod install;
pub mod jsonpath;
pub mod kopf;
pub mod logs;
pub mod names;
pub mod operate;
pub mod resource;
pub mod selector;
pub mod text;
pub mod time;
pub mod vocab;
pub mod yaml;

/// What `--version` prints: the crate version and the git commit it was built from.
pub const VERSION_LINE: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("KMS_GIT_COMMIT"), ")");
pub mod diagnose;
pub mod evidence;
pub mod render;
