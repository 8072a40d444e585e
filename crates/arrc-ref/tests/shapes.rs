//! Property tests of the shape rules, on random shapes of rank 0 to 3 (empty axes
//! included).

use arrc_ir::{Array, Data};
use arrc_ref::{eval_program, Env};
use proptest::prelude::*;

fn eval(src: &str, x: &Array, y: Option<&Array>) -> Array {
    let mut env = Env::default();
    env.arrays.insert("x".into(), x.clone());
    if let Some(y) = y {
        env.arrays.insert("y".into(), y.clone());
    }
    let prog = arrc_syntax::parse_str(src).unwrap();
    eval_program(&prog, &mut env)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .unwrap()
}

fn shape_of(a: &Array) -> Vec<usize> {
    a.shape.clone()
}

fn array() -> impl Strategy<Value = Array> {
    prop::collection::vec(0usize..4, 0..4).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        prop::collection::vec(-50i32..50, n)
            .prop_map(move |v| Array::new(shape.clone(), Data::I32(v)))
    })
}

proptest! {
    #[test]
    fn reshape_gives_its_left_argument(s in prop::collection::vec(0usize..4, 0..4), x in array()) {
        let sa = Array::vector(Data::I32(s.iter().map(|&d| d as i32).collect()));
        prop_assert_eq!(shape_of(&eval("y⍴x", &x, Some(&sa))), s);
    }

    #[test]
    fn transpose_reverses_the_shape(x in array()) {
        let mut want = x.shape.clone();
        want.reverse();
        prop_assert_eq!(shape_of(&eval("⍉x", &x, None)), want);
    }

    #[test]
    fn reductions_drop_an_axis(x in array()) {
        prop_assume!(x.rank() >= 1);
        let r = x.rank();
        prop_assert_eq!(shape_of(&eval("+/x", &x, None)), x.shape[..r - 1].to_vec());
        prop_assert_eq!(shape_of(&eval("⌈⌿x", &x, None)), x.shape[1..].to_vec());
        prop_assert_eq!(shape_of(&eval("+\\x", &x, None)), x.shape.clone());
        prop_assert_eq!(shape_of(&eval("×⍀x", &x, None)), x.shape.clone());
    }

    #[test]
    fn scalar_functions_keep_the_shape(x in array()) {
        prop_assert_eq!(shape_of(&eval("x+1", &x, None)), x.shape.clone());
        prop_assert_eq!(shape_of(&eval("2×x", &x, None)), x.shape.clone());
        prop_assert_eq!(shape_of(&eval("x⌈x", &x, None)), x.shape.clone());
        prop_assert_eq!(shape_of(&eval("-x", &x, None)), x.shape.clone());
    }

    #[test]
    fn catenation_adds_lengths(x in array()) {
        prop_assume!(x.rank() >= 1);
        let r = x.rank();
        let mut last = x.shape.clone();
        last[r - 1] *= 2;
        prop_assert_eq!(shape_of(&eval("x,x", &x, None)), last);
        let mut first = x.shape.clone();
        first[0] *= 2;
        prop_assert_eq!(shape_of(&eval("x⍪x", &x, None)), first);
    }

    #[test]
    fn outer_product_joins_shapes(x in array(), y in array()) {
        prop_assume!(x.len() * y.len() <= 4096);
        let mut want = x.shape.clone();
        want.extend(y.shape.iter().copied());
        prop_assert_eq!(shape_of(&eval("x∘.+y", &x, Some(&y))), want);
    }

    #[test]
    fn take_and_drop_lengths(x in array(), n in -5i64..5) {
        prop_assume!(x.rank() >= 1);
        let t = eval(&format!("{}↑x", n).replace('-', "¯"), &x, None);
        prop_assert_eq!(t.shape[0], n.unsigned_abs() as usize);
        prop_assert_eq!(&t.shape[1..], &x.shape[1..]);
        let d = eval(&format!("{}↓x", n).replace('-', "¯"), &x, None);
        prop_assert_eq!(d.shape[0], x.shape[0].saturating_sub(n.unsigned_abs() as usize));
    }

    #[test]
    fn reverse_and_rotate_keep_the_shape(x in array(), n in -5i64..5) {
        prop_assert_eq!(shape_of(&eval("⌽x", &x, None)), x.shape.clone());
        prop_assert_eq!(shape_of(&eval(&format!("{}⊖x", n).replace('-', "¯"), &x, None)), x.shape.clone());
        // Reversing twice is the identity.
        let back = eval("⌽⌽x", &x, None);
        prop_assert_eq!(back, x);
    }

    #[test]
    fn compress_counts_ones(x in array()) {
        prop_assume!(x.rank() >= 1);
        let n = *x.shape.last().unwrap();
        let mask = Array::vector(Data::I32((0..n).map(|i| (i % 2) as i32).collect()));
        let r = eval("y/x", &x, Some(&mask));
        prop_assert_eq!(*r.shape.last().unwrap(), n / 2);
    }

    #[test]
    fn grade_is_a_permutation(x in array()) {
        prop_assume!(x.rank() >= 1);
        let g = eval("⍋x", &x, None);
        let mut v: Vec<i64> = (0..g.len()).map(|i| g.data.get(i).as_i64().unwrap()).collect();
        v.sort();
        prop_assert_eq!(v, (1..=x.shape[0] as i64).collect::<Vec<_>>());
    }
}
