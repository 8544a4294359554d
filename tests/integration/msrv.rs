//! The declared minimum Rust version (`rust-version` in Cargo.toml) is honest: no locked
//! dependency declares a newer one. Clippy's `incompatible_msrv` lint, which CI runs with
//! `-D warnings`, checks ncugate's own code against the same version.

use std::process::Command;

fn version(text: &str) -> Vec<u64> {
    // "1.89" is "1.89.0".
    let mut parts: Vec<u64> = text.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    parts.resize(3, 0);
    parts
}

#[test]
fn no_dependency_needs_a_newer_rust_than_ncugate_declares() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let ours = packages
        .iter()
        .find(|p| p["name"] == "ncugate")
        .and_then(|p| p["rust_version"].as_str())
        .expect("Cargo.toml declares rust-version");
    let newer: Vec<String> = packages
        .iter()
        .filter_map(|p| {
            let theirs = p["rust_version"].as_str()?;
            (version(theirs) > version(ours)).then(|| {
                format!(
                    "{} {} needs Rust {theirs}",
                    p["name"].as_str().unwrap_or("?"),
                    p["version"].as_str().unwrap_or("?")
                )
            })
        })
        .collect();
    assert!(
        newer.is_empty(),
        "rust-version = \"{ours}\" in Cargo.toml, but:\n{}\nraise rust-version (and the README's prerequisite) or pin older versions",
        newer.join("\n")
    );
}
