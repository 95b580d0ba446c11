//! Kopf knowledge: what a Kopf operator writes and how to read it (facts and versions from
//! Kopf's source and git history, cited where used).
//!
//! - [`logs`]: Kopf's log line formats (`full`, `plain`, `json`);
//! - [`log_level`]: how much it logs (`kopf run -q`, a level its source sets);
//! - [`messages`]: Kopf's lifecycle vocabulary (handler outcomes, cycles, event posts), which
//!   our operator speaks too;
//! - [`source`]: an operator's Python source, parsed once, and its readers (settings, the
//!   env conditions that decide them, handlers);
//! - [`posting`]: the posting settings that source sets;
//! - [`filters`]: whether a handler's resource and filters select an object (Kopf's prematch);
//! - [`version`]: the Kopf version from the Deployment;
//! - [`peering`]: which of several Kopf operators works (peering objects, priorities, pauses);
//! - [`wording`]: the version range Kopf's log wording allows, when nothing pins it;
//! - [`progress`]: Kopf's per-handler progress records on an object;
//! - [`diffbase`]: Kopf's last-handled-configuration record and the annotation size limit.

pub mod diffbase;
pub mod filters;
pub mod log_level;
pub mod logs;
pub mod messages;
pub mod peering;
pub mod posting;
pub mod progress;
pub mod source;
pub mod version;
pub mod wording;
