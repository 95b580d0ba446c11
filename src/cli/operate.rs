//! The flags of `operate`: log format, events policy, concurrency, leader election, health
//! endpoint.

use clap::{Args, ValueEnum};

use super::values::parse_concurrency;

/// `--log-format` values of `operate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `<RFC3339 time> <LEVEL> [ns/name] <message> handler=<id> cause=<cause>`
    Text,
    /// One JSON object per line: `{"timestamp","level","message","object":{...},"handler","cause"}`
    Json,
}

/// `--events` values of `operate`: which events are posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsPolicy {
    /// Normal `Accepted` and every Warning.
    All,
    /// Warnings only (`ReconcileFailed`, `InvalidSpec`, `StatusPruned`).
    Warnings,
    /// Post nothing; outcomes are only in the logs and in `status`.
    None,
}

impl EventsPolicy {
    /// The flag value as written in a Deployment's args (`all`, `warnings`, `none`).
    pub fn as_arg(self) -> &'static str {
        match self {
            EventsPolicy::All => "all",
            EventsPolicy::Warnings => "warnings",
            EventsPolicy::None => "none",
        }
    }
}

/// Flags of `operate`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Run the controller for the context's namespace (leader election on a Lease)\n",
    "  kubectl microservice operate\n",
    "\n",
    "  # Watch two namespaces, one replica only, JSON log lines\n",
    "  kubectl microservice operate -n todo,shop --standalone --log-format json\n",
    "\n",
    "  # Watch all namespaces; serve /healthz, /readyz and /metrics on port 8080\n",
    "  kubectl microservice operate -A --health-listen 0.0.0.0:8080",
))]
pub struct OperateArgs {
    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Which events to post.
    #[arg(long, value_enum, default_value_t = EventsPolicy::All)]
    pub events: EventsPolicy,

    /// How many objects are handled at once (one object is never handled twice at once).
    #[arg(long, default_value_t = 16, value_name = "N", value_parser = parse_concurrency, allow_hyphen_values = true)]
    pub max_concurrent: u16,

    /// Run without leader election (one replica only; Kopf's flag of the same name). By default
    /// replicas elect a leader on a coordination.k8s.io/v1 Lease and only the leader handles objects.
    #[arg(long)]
    pub standalone: bool,

    /// Name of one Lease that governs every watched namespace. Without this and
    /// `--lease-namespace`, each watched namespace has its own Lease `microservice-operator` in
    /// that namespace (so operators of different namespaces never block each other); with `-A`,
    /// one Lease `microservice-operator` in the operator's own namespace.
    #[arg(long, value_name = "NAME", conflicts_with = "standalone", value_parser = crate::names::lease)]
    pub lease_name: Option<String>,

    /// Namespace of one Lease that governs every watched namespace (its name: `--lease-name`,
    /// default `microservice-operator`). Default: see `--lease-name`; with `-A`, the operator's
    /// own namespace (the service account's in a Pod, else the kubeconfig context's).
    #[arg(long, value_name = "NS", conflicts_with = "standalone", value_parser = crate::names::namespace)]
    pub lease_namespace: Option<String>,

    /// Serve /healthz, /readyz and /metrics (Prometheus text) over HTTP on this address, e.g.
    /// `0.0.0.0:8080` (port 0 picks a free port; the address is logged).
    #[arg(long, value_name = "ADDR")]
    pub health_listen: Option<std::net::SocketAddr>,

    /// Do not check the CRD at start-up (for an operator that may not read CRDs).
    #[arg(long)]
    pub skip_crd_check: bool,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Command};

    #[test]
    fn leader_election_flags() {
        let cli = Cli::try_parse_from(["kubectl-microservice", "operate"]).unwrap();
        let Command::Operate(args) = cli.command else {
            unreachable!()
        };
        assert!(!args.standalone);
        assert_eq!(args.lease_name, None);
        assert_eq!(args.lease_namespace, None);
        assert_eq!(args.health_listen, None);
        let cli = Cli::try_parse_from([
            "kubectl-microservice",
            "operate",
            "--lease-name",
            "ops.lock",
            "--lease-namespace",
            "ops",
            "--health-listen",
            "0.0.0.0:8080",
        ])
        .unwrap();
        let Command::Operate(args) = cli.command else {
            unreachable!()
        };
        assert_eq!(args.lease_name.as_deref(), Some("ops.lock"));
        assert_eq!(args.lease_namespace.as_deref(), Some("ops"));
        assert_eq!(args.health_listen, Some("0.0.0.0:8080".parse().unwrap()));
        for (bad, needle) in [
            (&["--standalone", "--lease-name", "x"][..], "cannot be used with"),
            (
                &["--lease-name", "Bad_Name"][..],
                "'Bad_Name' for '--lease-name <NAME>': expected a Lease name",
            ),
            (
                &["--lease-namespace", "Ops"][..],
                "'Ops' for '--lease-namespace <NS>': expected a namespace name",
            ),
            (&["--health-listen", "localhost"][..], "localhost"),
        ] {
            let err = Cli::try_parse_from(
                ["kubectl-microservice", "operate"]
                    .into_iter()
                    .chain(bad.iter().copied()),
            )
            .unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
            assert!(err.to_string().contains(needle), "{bad:?}: {err}");
        }
    }
}
