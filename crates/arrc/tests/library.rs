//! The library an embedder gets: with `default-features = false`, none of the
//! command's crates (clap, rustyline, indicatif, ctrlc) is in its dependency tree
//! (issue 18: the library holds no CLI concerns). `cargo tree -p arrc
//! --no-default-features -e normal` shows it; this checks the manifest that makes it so.

#[test]
fn command_crates_are_optional_behind_the_cli_feature() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("the crate's manifest");
    for dep in [
        "clap",
        "clap_complete",
        "clap_mangen",
        "rustyline",
        "indicatif",
        "ctrlc",
    ] {
        let line = manifest
            .lines()
            .find(|l| l.starts_with(&format!("{dep} ")) || l.starts_with(&format!("{dep}.")))
            .unwrap_or_else(|| panic!("{dep} is not a dependency any more: update this test"));
        assert!(
            line.contains("optional = true"),
            "{dep} must be optional: {line}"
        );
        assert!(
            manifest.contains(&format!("\"dep:{dep}\"")),
            "{dep} must be enabled by the cli feature only"
        );
    }
    assert!(manifest.contains("required-features = [\"cli\"]"));
}
