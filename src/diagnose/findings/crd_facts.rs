//! What the Microservice CRD in evidence says, for the fixes that patch it: its storage
//! version's place in `spec.versions`, whether its status schema keeps `status.kopf`, and the
//! label such a fix carries (the CRD is every team's).

use super::Ctx;

/// Whether the CRD's storage version keeps `status.kopf` (Kopf's status-side records):
/// `x-kubernetes-preserve-unknown-fields` on the root or the status, or a `kopf` property that
/// does. `None` without the CRD.
pub(crate) fn status_keeps_kopf(ctx: &Ctx<'_>) -> Option<bool> {
    let crd = ctx.snapshot.crd.get()?;
    let v = crd.spec.versions.iter().find(|v| v.storage)?;
    let Some(root) = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) else {
        // No schema at all: apiextensions/v1 requires one; treat as unknown.
        return None;
    };
    if root.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Some(true);
    }
    let Some(status) = root.properties.as_ref().and_then(|p| p.get("status")) else {
        return Some(false);
    };
    if status.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Some(true);
    }
    Some(
        status
            .properties
            .as_ref()
            .and_then(|p| p.get("kopf"))
            .is_some_and(|k| k.x_kubernetes_preserve_unknown_fields == Some(true)),
    )
}

/// The index of the CRD's storage version in `spec.versions` (for a JSON-patch path).
pub(crate) fn storage_version_index(ctx: &Ctx<'_>) -> Option<usize> {
    ctx.snapshot.crd.get()?.spec.versions.iter().position(|v| v.storage)
}

/// The label of a change of the CRD, which every team's Microservices share
/// ([`crate::diagnose::finding::shared_resource`]).
pub(crate) fn crd_label() -> String {
    crate::diagnose::finding::shared_resource(&format!(
        "the CRD {}, which every operator and user of Microservices shares",
        crate::resource::CRD_NAME
    ))
}
