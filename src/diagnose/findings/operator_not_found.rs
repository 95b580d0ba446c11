//! `operator-not-found`: no operator Deployment for Microservices is in evidence at all.

use super::operator_facts::{Served, install_command, served};
use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::text::count;

/// `operator-not-found`: no Deployment in evidence runs `kopf run`, `python -m kopf` or
/// `kubectl-microservice operate` (the resolver found no candidate): a problem, whose fix is
/// the install line, or `--operator` for one this tool does not recognise.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Served::NotFound = served(ctx) else {
        return Vec::new();
    };
    let deployments = ctx.snapshot.operator.deployments.get().map_or(0, Vec::len);
    let mut evidence = vec![format!(
        "{} in evidence; none runs `kopf run`, `python -m kopf` or `kubectl-microservice operate`",
        count(deployments as u64, "Deployment")
    )];
    evidence.extend(ctx.resolution().evidence.iter().cloned());
    vec![finding(
        FindingId::OperatorNotFound,
        Severity::Problem,
        "no operator Deployment for Microservices was found".into(),
        evidence,
        Some(match install_command(ctx) {
            Some(install) => format!(
                "install one for namespace {} (`{install}`), or name the one you run: --operator NAMESPACE/deployment/NAME",
                ctx.ns
            ),
            None => format!(
                "name the one you run: --operator NAMESPACE/deployment/NAME, or run one (`kubectl microservice operate --namespace {}`)",
                ctx.ns
            ),
        }),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::Ctx;
    use super::super::ctx::Options;
    use super::super::ctx::fixture::bundle;
    use super::*;
    use crate::evidence::Evidence;

    /// A snapshot whose Deployments hold no operator: a problem; one with an operator: nothing.
    #[test]
    fn no_operator_deployment_is_a_problem() {
        let mut snapshot = bundle("bundles/healthy");
        let obj = snapshot.microservices.get().unwrap()[0].clone();
        let ctx = Ctx::new(&snapshot, &obj, Options::default());
        assert!(check(&ctx).is_empty());
        snapshot.operator.deployments = Evidence::Present(Vec::new());
        snapshot.operator.pods = Evidence::Present(Vec::new());
        let ctx = Ctx::new(&snapshot, &obj, Options::default());
        let found = check(&ctx);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].id, found[0].severity),
            (FindingId::OperatorNotFound, Severity::Problem)
        );
    }
}
