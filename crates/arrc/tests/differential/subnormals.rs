//! f32 subnormals on the device. NVIDIA's H200 cannot keep them when asked
//! (no shaderDenormPreserveFloat32) and flushed them in every f32 instruction:
//! `x×1e10` of `x←1e¯40` was 0 (1e¯30 on the reference), `×x` 0, `-x` 0, `x⌈0` 0,
//! and the f32 → f64 conversion too (`+/1e¯40 1e¯40` was 0). arrc computes f32 in
//! f64 there, widened from the bits; these compare with the reference to an ulp of
//! f32, subnormal ulps included (the other tests' absolute tolerance does not see a
//! subnormal at all).

use super::*;

/// Within `ulps` f32 ulps of the reference, subnormals exactly as such; other
/// types exactly.
fn same_to_ulps(what: &str, got: &Array, want: &Array, ulps: f32) {
    assert_eq!(got.shape, want.shape, "{what}: shape");
    match (&got.data, &want.data) {
        (Data::F32(g), Data::F32(w)) => {
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                let ulp = if w.is_finite() && *w != 0.0 {
                    f32::from_bits(w.abs().to_bits() + 1) - w.abs()
                } else {
                    f32::from_bits(1)
                };
                assert!(
                    g == w || (g - w).abs() <= ulps * ulp,
                    "{what}[{i}]: device {g:e}, reference {w:e}"
                );
            }
        }
        (g, w) => assert_eq!(g, w, "{what}"),
    }
}

/// `expr` on the device (no step left to the CPU) and on the reference, within two
/// f32 ulps (`same_to_ulps`); `how` says how the device was tuned.
fn same_on_both(s: &mut Session, cpu: &mut arrc_ref::Env, expr: &str, how: &str) {
    let what = format!("{expr} {how}");
    let g = s
        .eval(expr)
        .unwrap_or_else(|e| panic!("{what} on the device: {e}"));
    assert!(g.notes.is_empty(), "{what} left the device: {:?}", g.notes);
    let g = g.value.expect("a value");
    let prog = arrc_syntax::parse_str(expr).expect("parses");
    let c = arrc_ref::eval_program(&prog, cpu)
        .unwrap_or_else(|e| panic!("{what} on the reference: {e}"))
        .expect("a value");
    same_to_ulps(&what, &g, &c, 2.0);
}

#[test]
fn f32_subnormals_on_the_device() {
    let tiny = f32::from_bits(1);
    let top = f32::from_bits(0x007f_ffff);
    let least = f32::MIN_POSITIVE;
    // 37 items: a subgroup of 32 and more, or several of lavapipe's 8.
    let mut x = vec![
        tiny, -tiny, 1e-40, -1e-40, 1e-39, -3e-39, top, -top, least, -least, 0.0, 1.5, -2.25,
    ];
    let mut y = vec![
        1e-20, -1e-10, 3.5, 1e-30, tiny, -1e-40, 2.0, 1e-36, -0.5, 1e-38, 1.0, 7e-39, -1e-20,
    ];
    while x.len() < 37 {
        let k = x.len();
        x.push(if k % 2 == 0 { 1e-41 } else { -2e-40 } * (k as f32));
        y.push(if k % 3 == 0 { 1e-19 } else { -3e-21 } * (k as f32));
    }
    // A matrix whose column sums read four columns at a time (`Unit::Quad`, with
    // `quad_columns_from` below): a subnormal in each quad of columns, some late
    // in their columns, each its column's only nonzero (column 12 holds 2.5s).
    let mut m: Vec<f32> = (0..40 * 12)
        .map(|k| if k % 12 == 11 { 2.5 } else { 0.0 })
        .collect();
    m[3 * 12 + 5] = tiny;
    m[7 * 12 + 6] = -1e-40;
    m[38 * 12 + 9] = top;
    m[39 * 12] = 1e-39;
    let m = Array::new(vec![40, 12], Data::F32(m));
    let (x, y) = (Array::vector(Data::F32(x)), Array::vector(Data::F32(y)));
    let mut s = gpu();
    let mut cpu = bind_both(&mut s, ElemType::F32, &[("x", &x), ("y", &y), ("m", &m)]);
    let exprs = [
        // Subnormals read.
        "x×1e10",
        "x÷1e¯10",
        "x+y",
        "x-y",
        "-x",
        "|x",
        "×x",
        "x⌈y",
        "x⌊y",
        "x⌈0",
        "⌊x",
        "⌈x",
        "x=y",
        "x<0",
        // Against constants that are neither 0 nor subnormal: native comparisons.
        "x<0.5",
        "x>¯2.5",
        "x≥2e¯38",
        "x≤¯2e¯38",
        "2e¯38>x",
        "x=1.5",
        "x≠1.5",
        "(x>1e¯30)/x",
        "(x<¯1e¯30)/x",
        "+/x",
        "+/10↑x",
        "+/x-1.5",
        "+\\x",
        "⌈/x",
        "⌊/x",
        "⌈\\x",
        "⌊\\x",
        "×/1+x",
        "x[⍋x]",
        "1○x",
        "3○x",
        "¯3○x",
        "7○x",
        "*x",
        "3|x",
        "1e¯39|x",
        "⍟3+x",
        "x+.×y",
        "(4 9⍴x)+.×9 3⍴y×1e10",
        "+⌿5 7⍴x",
        "⌈⌿5 7⍴x",
        "{+/,⍵}⌺3 3⊢5 7⍴x",
        "{⌈/,⍵}⌺3 3⊢5 7⍴x",
        "+⌿m",
        "+⌿m-1.5",
        "⌈⌿m",
        // Subnormals made.
        "y×1e¯20",
        "y÷1e30",
        "y×y",
        "y-y×1.0000001",
        "*¯100+y",
        "2*¯140+⍳5",
        "+/y×1e¯20",
        "+\\y×1e¯25",
        // Made and read in one kernel: where f32 is computed natively under
        // guards (`emit/exact32.rs`), each of these meets a check that fails.
        "(y×1e¯20)×1e20",
        "(x×1e10)+y×1e¯30",
        "(y×y)÷y",
        "(y×1e¯30)+y×1e¯31",
        "(y×1e¯30)-y×1e¯30",
        "x-x",
        "+/(y×1e¯20)×1e20",
        "+\\(y×1e¯20)×1e20",
        "⌈/(y×1e¯25)×1e10",
        "(y×1e¯20)<1e¯39",
        // A fast path's quotient by a product flushed to 0 raises no error.
        "1e¯10÷1e¯39⌈(|y)×1e¯20",
        "⍟1e¯44⌈(|y)×1e¯20",
    ];
    // As computed, and with the fast paths' native f32 flushing subnormals as
    // NVIDIA's does (`Tuning::flush_f32`), whatever this device keeps.
    for flush in [false, true] {
        s.tune(arrc::Tuning {
            flush_f32: Some(flush),
            quad_columns_from: Some(0),
            ..Default::default()
        });
        for expr in exprs {
            same_on_both(&mut s, &mut cpu, expr, &format!("(flush_f32 {flush})"));
        }
    }
}

#[test]
fn f32_scans_with_subnormals_in_one_late_tile() {
    // An f32 `+\` in f64 runs a second, exact dispatch over every tile only where
    // the first read a subnormal (its subgroups write the second's workgroup count).
    // Zeros with subnormals in the last tile alone, and in the first alone, at three
    // tiles and a bit (4096 items a tile by default): each prefix is a subnormal sum,
    // exact in f32, and 0 wherever a flushing fast path's result was kept.
    let n = 3 * 4096 + 5;
    let tiny = f32::from_bits(1);
    let mut s = gpu();
    for at in [[n - 3, n - 1], [2, 4000]] {
        let mut x = vec![0.0f32; n];
        x[at[0]] = 3.0 * tiny;
        x[at[1]] = -1e-40;
        let x = Array::vector(Data::F32(x));
        let mut cpu = bind_both(&mut s, ElemType::F32, &[("x", &x)]);
        for flush in [false, true] {
            s.tune(arrc::Tuning {
                flush_f32: Some(flush),
                ..Default::default()
            });
            // (The last: a scan of a length computed on the device, whose exact
            // dispatch is sized by that length and guarded.)
            for expr in ["+\\x", "+\\x×1e10", "+\\(x≠0)/x"] {
                same_on_both(
                    &mut s,
                    &mut cpu,
                    expr,
                    &format!("at {at:?} (flush_f32 {flush})"),
                );
            }
        }
    }
}

#[test]
fn indirect_arguments_are_computed_also_where_the_kernel_they_size_is_guarded() {
    // An f32 `+\` of a length computed on the device, where f32 is widened from
    // the bits: its exact dispatch is guarded (it runs only where the first read a
    // subnormal) and sized by arguments a small kernel computes. That kernel was
    // guarded too, so where no subnormal was read it wrote nothing, and the exact
    // dispatch took whatever its temporary buffer held as its workgroup count.
    let mut s = gpu();
    s.set("x", Array::vector(Data::F32(vec![0.0, 1.5, 2.5])))
        .unwrap();
    let plan = s.compile("+\\(x≠0)/x").unwrap().plan;
    let guarded: Vec<_> = plan
        .kernels
        .iter()
        .filter(|k| k.guard.is_some())
        .map(|k| k.name.clone())
        .collect();
    assert!(
        guarded.iter().any(|n| n.starts_with("scan")),
        "the exact scan is guarded: {guarded:?}"
    );
    assert!(
        guarded.iter().all(|n| !n.starts_with("indirect_args")),
        "guarded: {guarded:?}"
    );
    assert_eq!(arrc::display(&device_value(&mut s, "+\\(x≠0)/x")), "1.5 4");
}
