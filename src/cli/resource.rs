//! `--resource TYPE`, the flag `status`, `logs`, `explain-events` and `collect` share (flattened
//! into each): which resource they diagnose, the Microservice when absent.

use clap::Args;

/// The `--resource` flag.
#[derive(Debug, Clone, Default, Args)]
pub struct ResourceArgs {
    /// The resource to diagnose, as kubectl names a type: PLURAL[.GROUP]
    /// (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through
    /// the API server's discovery, or a bundle's CRD (default: microservices.platform.example.io).
    /// With it, an object argument TYPE/NAME takes that resource's type names.
    #[arg(long, value_name = "TYPE", value_parser = crate::names::resource_type_arg)]
    pub resource: Option<String>,
}

/// The subcommands that take `--resource`, and the id of their object argument: the one whose
/// parser [`lenient_objects`] swaps.
const OBJECT_ARGS: [(&str, &str); 3] = [("status", "name"), ("explain-events", "name"), ("logs", "object")];

/// Whether a command line gives `--resource` (`--resource X` or `--resource=X`), before parsing.
pub fn given<T: AsRef<std::ffi::OsStr>>(args: &[T]) -> bool {
    args.iter().any(|a| {
        let a = a.as_ref().to_string_lossy();
        a == "--resource" || a.starts_with("--resource=")
    })
}

/// `command` with each object argument parsed by [`crate::names::typed_object_ref_arg`]: a
/// `TYPE/NAME` of another resource than the Microservice is then kept for the command to match
/// against the resource it resolves (without `--resource`, the Microservice's parser refuses it).
pub fn lenient_objects(mut command: clap::Command) -> clap::Command {
    for (sub, arg) in OBJECT_ARGS {
        command = command.mut_subcommand(sub, |s| {
            s.mut_arg(arg, |a| a.value_parser(crate::names::typed_object_ref_arg))
        });
    }
    command
}
