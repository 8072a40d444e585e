//! Data files in and out: NumPy `.npy` (`arrc eval --set x=data.npy --out r.npy`,
//! `Session::set_npy`), through the npyz crate: booleans, signed and unsigned
//! integers of any width, f32 and f64, either byte order, C or Fortran order, any
//! rank; and CSV files of numbers (`--set x=data.csv`, `Session::set_csv`), through
//! the csv crate, as a matrix. A file that is not one, or holds what arrc cannot
//! take, is an error that names the file (and the line) and says what is wrong.

use crate::{Array, Error, Session};
use arrc_ir::{Data, ErrorClass};
use npyz::{NpyFile, Order, TypeChar, WriterBuilder};
use std::path::Path;

fn file_error(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorClass::Domain,
        format!("{}: {what}", path.display()),
        0..0,
    )
}

/// The array in the `.npy` file at `path`, in C order.
pub fn read_npy(path: &Path) -> Result<Array, Error> {
    let bytes = std::fs::read(path).map_err(|e| file_error(path, e))?;
    let file = NpyFile::new(&bytes[..]).map_err(|e| file_error(path, e))?;
    let shape: Vec<usize> = file.shape().iter().map(|&d| d as usize).collect();
    let order = file.order();
    let npyz::DType::Plain(ty) = file.dtype() else {
        return Err(file_error(
            path,
            "a structured dtype (fields) is not an array of numbers",
        ));
    };
    let bad = |e: std::io::Error| file_error(path, e);
    let wide = |v: Vec<u64>| -> Result<Data, Error> {
        v.into_iter()
            .map(|x| {
                i64::try_from(x)
                    .map_err(|_| file_error(path, format!("{x} is beyond 64-bit signed integers")))
            })
            .collect::<Result<Vec<i64>, Error>>()
            .map(Data::I64)
    };
    let data = match (ty.type_char(), ty.size_field()) {
        (TypeChar::Bool, 1) => Data::Bool(file.into_vec::<bool>().map_err(bad)?),
        (TypeChar::Int, 1) => Data::I32(widened::<i8, i32>(file).map_err(bad)?),
        (TypeChar::Int, 2) => Data::I32(widened::<i16, i32>(file).map_err(bad)?),
        (TypeChar::Int, 4) => Data::I32(file.into_vec::<i32>().map_err(bad)?),
        (TypeChar::Int, 8) => Data::I64(file.into_vec::<i64>().map_err(bad)?),
        (TypeChar::Uint, 1) => Data::I32(widened::<u8, i32>(file).map_err(bad)?),
        (TypeChar::Uint, 2) => Data::I32(widened::<u16, i32>(file).map_err(bad)?),
        (TypeChar::Uint, 4) => Data::I64(widened::<u32, i64>(file).map_err(bad)?),
        (TypeChar::Uint, 8) => wide(file.into_vec::<u64>().map_err(bad)?)?,
        (TypeChar::Float, 4) => Data::F32(file.into_vec::<f32>().map_err(bad)?),
        (TypeChar::Float, 8) => Data::F64(file.into_vec::<f64>().map_err(bad)?),
        _ => {
            return Err(file_error(
                path,
                format!("dtype {ty} is not supported (booleans, integers, f32 and f64 are)"),
            ))
        }
    };
    // APL has no infinities or NaNs.
    if let Some(i) = (0..data.len()).find(|&i| !data.get(i).as_f64().is_finite()) {
        return Err(file_error(
            path,
            format!("item {i} is not a finite number (APL has no infinities or NaNs)"),
        ));
    }
    let a = Array::new(shape.clone(), data);
    a.check().map_err(|m| file_error(path, m))?;
    Ok(match order {
        Order::C => a,
        Order::Fortran => fortran_to_c(a),
    })
}

/// The file's items of type `T`, each as a `U` that holds every value of it.
fn widened<T: npyz::Deserialize + Into<U>, U>(file: NpyFile<&[u8]>) -> std::io::Result<Vec<U>> {
    Ok(file.into_vec::<T>()?.into_iter().map(Into::into).collect())
}

/// An array whose items were stored first axis fastest, in ravel (C) order.
fn fortran_to_c(a: Array) -> Array {
    let shape = a.shape.clone();
    let n = a.len();
    let mut d = Data::with_capacity(a.elem, n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        // The Fortran position of the C-order index `idx`.
        let mut off = 0;
        let mut stride = 1;
        for (k, &i) in idx.iter().enumerate() {
            off += i * stride;
            stride *= shape[k];
        }
        d.push(a.data.get(off));
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Array::new(shape, d)
}

/// Writes `a` to `path` as a `.npy` file (little-endian, C order: booleans as `|b1`,
/// integers as `<i4`/`<i8`, floats as `<f4`/`<f8`).
pub fn write_npy(path: &Path, a: &Array) -> Result<(), Error> {
    let file = std::fs::File::create(path).map_err(|e| file_error(path, e))?;
    let out = std::io::BufWriter::new(file);
    let shape: Vec<u64> = a.shape.iter().map(|&d| d as u64).collect();
    fn write<T: npyz::AutoSerialize + Copy>(
        out: impl std::io::Write,
        shape: &[u64],
        items: &[T],
    ) -> std::io::Result<()> {
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .writer(out)
            .begin_nd()?;
        w.extend(items.iter().copied())?;
        w.finish()
    }
    let r = match &a.data {
        Data::Bool(v) => write(out, &shape, v),
        Data::I32(v) => write(out, &shape, v),
        Data::I64(v) => write(out, &shape, v),
        Data::F32(v) => write(out, &shape, v),
        Data::F64(v) => write(out, &shape, v),
        Data::Char(_) => {
            return Err(file_error(
                path,
                "characters cannot be written to a .npy file yet",
            ))
        }
        Data::Mixed(_) => {
            return Err(file_error(
                path,
                "a mixed or nested array cannot be written to a .npy file",
            ))
        }
    };
    r.map_err(|e| file_error(path, e))
}

/// The numbers of the CSV file at `path` as a matrix, a row per record: integers
/// where every field is one (i32 or i64), else floats of type `float`. Fields may
/// use `¯` or `-` for negatives; every record has the same count of fields.
pub fn read_csv(path: &Path, float: arrc_ir::ElemType) -> Result<Array, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| file_error(path, e))?;
    let mut rows = 0;
    let mut cols = None;
    let mut nums: Vec<arrc_syntax::lexer::Num> = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| file_error(path, e))?;
        if *cols.get_or_insert(record.len()) != record.len() {
            return Err(file_error(
                path,
                format!(
                    "line {}: {} fields where the first line has {}",
                    line + 1,
                    record.len(),
                    cols.unwrap_or(0)
                ),
            ));
        }
        for field in record.iter() {
            let n = arrc_ref::csv_number(field).ok_or_else(|| {
                file_error(
                    path,
                    format!("line {}: {field:?} is not a number", line + 1),
                )
            })?;
            nums.push(n);
        }
        rows += 1;
    }
    let cols = cols.unwrap_or(0);
    let items: Vec<arrc_ir::Scalar> = nums
        .into_iter()
        .map(|n| arrc_ir::Scalar::from_literal(n, float))
        .collect();
    let ty = items
        .iter()
        .map(|s| s.elem_type())
        .max()
        .unwrap_or(arrc_ir::ElemType::I32);
    let mut d = Data::with_capacity(ty, items.len());
    items.into_iter().for_each(|s| d.push(s));
    Ok(Array::new(vec![rows, cols], d))
}

impl Session {
    /// Defines `name` as the numbers of the CSV file at `path` (see [`read_csv`]).
    pub fn set_csv(&mut self, name: &str, path: &Path) -> Result<(), Error> {
        let a = read_csv(path, self.float())?;
        self.set(name, a)
    }

    /// Defines `name` as the array in the `.npy` file at `path`.
    pub fn set_npy(&mut self, name: &str, path: &Path) -> Result<(), Error> {
        let a = read_npy(path)?;
        self.set(name, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_order_is_read_in_c_order() {
        // A 2×3 array stored column by column: 1 4 2 5 3 6.
        let f = Array::new(vec![2, 3], Data::I32(vec![1, 4, 2, 5, 3, 6]));
        assert_eq!(fortran_to_c(f).data, Data::I32(vec![1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn round_trips() {
        let dir = std::env::temp_dir().join(format!("arrc-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for a in [
            Array::new(vec![2, 3], Data::I32(vec![1, -2, 3, 4, 5, 6])),
            Array::new(vec![4], Data::F32(vec![0.5, -1.25, 3.0, 1e30])),
            Array::new(vec![2, 1, 2], Data::F64(vec![0.1, 0.2, 0.3, 0.4])),
            Array::new(vec![3], Data::Bool(vec![true, false, true])),
            Array::new(vec![], Data::I64(vec![1 << 40])),
            Array::new(vec![0, 3], Data::I32(vec![])),
        ] {
            let p = dir.join("a.npy");
            write_npy(&p, &a).unwrap();
            assert_eq!(read_npy(&p).unwrap(), a);
        }
        let bad = dir.join("bad.npy");
        std::fs::write(&bad, b"not numpy").unwrap();
        let e = read_npy(&bad).unwrap_err();
        assert!(e.message.contains("bad.npy"), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
