//! `--resource TYPE` for the commands that take it before they read anything: the resource
//! resolved (a bundle's CRD, else the API server's discovery) and an object argument's
//! `TYPE/NAME` matched against it ([`crate::evidence::target`]).

use std::path::Path;

use crate::cli::GlobalArgs;
use crate::error::AppError;
use crate::resource::identity::ResourceId;

/// The resource `typed` names: in `bundle` when one is read, else on the cluster of `global`'s
/// connection flags (its own client; discovery is read only when `typed` is given). Absent:
/// the Microservice, or a bundle's `meta.json` `resource`.
pub fn resolve(global: &GlobalArgs, typed: Option<&str>, bundle: Option<&Path>) -> Result<ResourceId, AppError> {
    if let Some(dir) = bundle {
        return crate::evidence::target::in_bundle(dir, typed);
    }
    let Some(typed) = typed else {
        return Ok(ResourceId::microservice());
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|source| AppError::Io {
        context: "start the async runtime".into(),
        source,
    })?;
    runtime.block_on(async {
        let connection = global.connection();
        let (client, _) = crate::client::client(&connection, crate::client::Usage::Diagnostics).await?;
        crate::evidence::target::live(&client, Some(typed)).await
    })
}

/// `name` (an object argument, as parsed) with the type of a `TYPE/NAME` of `resource` dropped;
/// unchanged without `--resource` (`typed` `None`: the Microservice parser took it already).
pub fn object(name: Option<&str>, typed: Option<&str>, resource: &ResourceId) -> Result<Option<String>, AppError> {
    match (name, typed) {
        (Some(given), Some(_)) => crate::evidence::target::object_arg(given, resource).map(Some),
        (name, _) => Ok(name.map(str::to_string)),
    }
}
