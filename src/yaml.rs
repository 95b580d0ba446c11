//! YAML as every output writes it (`-o yaml`, `manifests`, the RBAC rules a fix quotes): one
//! pure function at the bottom of the crate, so that the diagnostics quote a manifest's rules
//! in the form `manifests` prints them without reaching up into the human-output layer
//! (`render`, which uses this too).

use serde::Serialize;

/// A YAML document (no `---` marker), with a trailing newline. Strings stay on one line (a
/// line break inside a string is written `\n` in double quotes): no folded or literal blocks,
/// so that a value can be found with grep; strings that YAML 1.1 would read as another type
/// (`'true'`, a timestamp) are quoted.
pub fn to_string<T: Serialize>(value: &T) -> String {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    serde_saphyr::to_string_with_options(value, options).expect("output serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_reads_back_as_the_same_document_with_one_line_strings() {
        let long = "word ".repeat(30);
        let doc = serde_json::json!({
            "schemaVersion": 1,
            "captured": "2026-11-29T17:12:03Z",
            "flag": "true",
            "empty": "",
            "fix": "first line\nsecond line",
            "long": long.trim_end(),
            "items": [{"name": "todo-api", "port": 8080, "observed": null}],
            "gaps": []
        });
        let text = to_string(&doc);
        let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, doc);
        assert_eq!(
            text,
            format!(
                "captured: \"2026-11-29T17:12:03Z\"\nempty: \"\"\nfix: \"first line\\nsecond line\"\nflag: \"true\"\ngaps: []\nitems:\n- name: todo-api\n  observed: null\n  port: 8080\nlong: {}\nschemaVersion: 1\n",
                long.trim_end()
            )
        );
    }
}
