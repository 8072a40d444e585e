//! `From`/`TryFrom` between [`Array`] and `ndarray::ArrayD<T>` (the `ndarray`
//! feature), for every element type: `bool`, `i32`, `i64`, `f32`, `f64` and `char`.
//!
//! Into an `Array`: any memory order (read in logical, C order); integers, booleans
//! and characters by `From`, floats by `TryFrom` (a NaN or an infinity is no APL
//! number). Out of an `Array`: `TryFrom`, which says so when the array holds another
//! type (convert first, or ask for that one) or is nested.

use crate::array::{Array, Data};
use ndarray::{ArrayD, IxDyn};

fn shape_of<T>(a: &ArrayD<T>) -> Vec<usize> {
    a.shape().to_vec()
}

fn out_of<T>(
    a: &Array,
    take: impl FnOnce(&Data) -> Option<Vec<T>>,
    what: &str,
) -> Result<ArrayD<T>, String> {
    let v = take(&a.data).ok_or_else(|| format!("the array holds {}, not {what}", a.elem))?;
    ArrayD::from_shape_vec(IxDyn(&a.shape), v).map_err(|e| e.to_string())
}

/// `ArrayD<T>` out of an `Array` whose data is `Data::$variant`.
macro_rules! out {
    ($t:ty, $variant:ident) => {
        impl TryFrom<&Array> for ArrayD<$t> {
            type Error = String;
            fn try_from(a: &Array) -> Result<ArrayD<$t>, String> {
                out_of(
                    a,
                    |d| match d {
                        Data::$variant(v) => Some(v.clone()),
                        _ => None,
                    },
                    stringify!($t),
                )
            }
        }
    };
}

macro_rules! exact {
    ($t:ty, $variant:ident) => {
        impl From<ArrayD<$t>> for Array {
            fn from(a: ArrayD<$t>) -> Array {
                let shape = shape_of(&a);
                Array::new(shape, Data::$variant(a.iter().copied().collect()))
            }
        }
        out!($t, $variant);
    };
}

macro_rules! float {
    ($t:ty, $variant:ident) => {
        impl TryFrom<ArrayD<$t>> for Array {
            type Error = String;
            fn try_from(a: ArrayD<$t>) -> Result<Array, String> {
                if a.iter().any(|x| !x.is_finite()) {
                    return Err("a NaN or an infinity is no APL number".into());
                }
                let shape = shape_of(&a);
                Ok(Array::new(
                    shape,
                    Data::$variant(a.iter().copied().collect()),
                ))
            }
        }
        out!($t, $variant);
    };
}

exact!(bool, Bool);
exact!(i32, I32);
exact!(i64, I64);
exact!(char, Char);
float!(f32, F32);
float!(f64, F64);

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ShapeBuilder;

    #[test]
    fn round_trips_every_type_and_order() {
        let m = ArrayD::from_shape_vec(IxDyn(&[2, 3]), vec![1, 2, 3, 4, 5, 6]).unwrap();
        let a: Array = m.clone().into();
        assert_eq!(a.shape, [2, 3]);
        assert_eq!(ArrayD::<i32>::try_from(&a).unwrap(), m);
        // Fortran order is read in logical order.
        let f = ArrayD::from_shape_vec(IxDyn(&[2, 3]).f(), vec![1i64, 4, 2, 5, 3, 6]).unwrap();
        let a: Array = f.into();
        assert_eq!(a.data, Data::I64(vec![1, 2, 3, 4, 5, 6]));
        let b: Array = ArrayD::from_elem(IxDyn(&[]), true).into();
        assert_eq!(b.rank(), 0);
        let c: Array = ArrayD::from_shape_vec(IxDyn(&[2]), vec!['a', '⍳'])
            .unwrap()
            .into();
        assert_eq!(ArrayD::<char>::try_from(&c).unwrap().len(), 2);
        let x = ArrayD::from_shape_vec(IxDyn(&[3]), vec![0.5f32, -1.0, 2.0]).unwrap();
        let a = Array::try_from(x.clone()).unwrap();
        assert_eq!(ArrayD::<f32>::try_from(&a).unwrap(), x);
        let d = ArrayD::from_shape_vec(IxDyn(&[1]), vec![0.1f64]).unwrap();
        assert_eq!(
            ArrayD::<f64>::try_from(&Array::try_from(d.clone()).unwrap()).unwrap(),
            d
        );
        assert!(Array::try_from(ArrayD::from_elem(IxDyn(&[1]), f64::NAN)).is_err());
        assert!(ArrayD::<f64>::try_from(&a).unwrap_err().contains("f32"));
    }
}
