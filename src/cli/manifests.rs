//! The flags of `manifests`: what the operator watches, its image and mode, and whether the
//! shared objects are printed.

use clap::Args;

use super::operate::EventsPolicy;

/// Flags of `manifests`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Install the operator in ops, watching todo and shop (needs cluster-admin: CRD, ClusterRoles)\n",
    "  kubectl microservice manifests -n ops --watch-namespace todo,shop | kubectl apply -f -\n",
    "\n",
    "  # One replica watching all namespaces, as JSON\n",
    "  kubectl microservice manifests -n ops -A --standalone -o json\n",
    "\n",
    "  # The cluster has the CRD already (another team's, a Kopf operator's): install all but the CRD\n",
    "  kubectl microservice manifests -n ops --watch-namespace todo,shop --without-crd | kubectl apply -f -\n",
    "\n",
    "  # Uninstall that team's operator, keeping the CRD (every team's Microservices) and the shared ClusterRoles\n",
    "  kubectl microservice manifests -n ops --watch-namespace todo,shop --without-shared | kubectl delete -f -",
))]
pub struct ManifestsArgs {
    /// Namespace the operator watches (repeatable or comma-separated). Give this or `-A`.
    #[arg(long = "watch-namespace", value_name = "NS", value_delimiter = ',', value_parser = crate::names::namespace)]
    pub watch_namespaces: Vec<String>,

    /// Operator image.
    #[arg(long, value_name = "REF", default_value = crate::install::DEFAULT_IMAGE)]
    pub image: String,

    /// One replica, `Recreate` strategy, `operate --standalone`.
    #[arg(long)]
    pub standalone: bool,

    /// `--events` value written into the operator Deployment's args.
    #[arg(long, value_enum, default_value_t = EventsPolicy::All)]
    pub events: EventsPolicy,

    /// Leave out the CRD, and only the CRD: to install on a cluster that has it already (another
    /// team's, another operator's), leaving it as its owners keep it. Without this flag, when
    /// the cluster has the CRD with another schema, the CRD printed is the cluster's with this
    /// tool's added (nothing removed), and stderr says what it adds.
    #[arg(long)]
    pub without_crd: bool,

    /// Leave out what every installation shares: the CRD (deleting it deletes every team's
    /// Microservices) and the ClusterRoles. What is left is this operator's own objects, for
    /// `kubectl delete -f -` to uninstall one team's operator.
    #[arg(long)]
    pub without_shared: bool,
}
