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

/// With the `ndarray` feature, `ndarray::ArrayD` goes into a session and comes out of
/// it on the device (`From` in for integers, `TryFrom` for floats and out).
#[test]
fn ndarray_arrays_in_and_out_of_a_session() {
    use ndarray::{ArrayD, IxDyn};
    let mut s = arrc::Session::new(arrc::Backend::Auto).unwrap();
    let m = ArrayD::from_shape_vec(IxDyn(&[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.5]).unwrap();
    s.set("m", arrc::Array::try_from(m).unwrap()).unwrap();
    let r = s.eval("+⌿m").unwrap().value.unwrap();
    let r = ArrayD::<f32>::try_from(&r).unwrap();
    assert_eq!(
        r,
        ArrayD::from_shape_vec(IxDyn(&[3]), vec![5.0, 7.0, 9.5]).unwrap()
    );
    let i: arrc::Array = ArrayD::from_shape_vec(IxDyn(&[4]), vec![3i64, 1, 4, 1])
        .unwrap()
        .into();
    s.set("i", i).unwrap();
    let g = s.eval("⍋i").unwrap().value.unwrap();
    assert!(ArrayD::<f64>::try_from(&g).is_err());
}

#[test]
fn arrays_with_infinities_or_nans_are_refused() {
    // APL has neither, and kernels rely on it: an f32 value is bounded by the
    // largest finite f32, so `x×b×0.25` needs no overflow check. A session given an
    // infinity would have returned one (DOMAIN ERROR before the bounds).
    let mut s = arrc::Session::new(arrc::Backend::Auto).unwrap();
    for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        let a = arrc::Array::vector(arrc::Data::F32(vec![1.0, bad]));
        let e = s.set("x", a).unwrap_err();
        assert_eq!(e.class, arrc::ErrorClass::Domain, "{e}");
        assert!(e.message.contains("item 1"), "{e}");
    }
    let a = arrc::Array::vector(arrc::Data::F64(vec![f64::NAN]));
    assert!(s.set("y", a).is_err());
    // A saved workspace whose f32 value is beyond f32 (a hand-edited file).
    let dir = std::env::temp_dir().join(format!("arrc-inf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ws.json");
    s.set("z", arrc::Array::vector(arrc::Data::F32(vec![3e38])))
        .unwrap();
    s.save_workspace(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replace("3.0000000054977558e+38", "1e39");
    assert_ne!(text, edited, "{text}");
    std::fs::write(&path, edited).unwrap();
    let mut t = arrc::Session::new(arrc::Backend::Auto).unwrap();
    let e = t.load_workspace(&path).unwrap_err();
    assert!(e.message.contains("not a finite f32"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
