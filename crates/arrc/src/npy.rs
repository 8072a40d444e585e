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
    if let Some(i) = data.first_not_finite() {
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

/// The CSV file at `path` as a matrix, a row per record: integers where every field
/// is one (i32 or i64), else floats of type `float`. Fields may use `¯` or `-` for
/// negatives; every record has the same count of fields. A field that is not a
/// number is text (a character vector, as `⎕CSV` reads it), and the matrix is then a
/// nested one (a header line's names, say).
pub fn read_csv(path: &Path, float: arrc_ir::ElemType) -> Result<Array, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_path(path)
        .map_err(|e| file_error(path, e))?;
    let mut rows = 0;
    let mut cols = None;
    let mut fields: Vec<Result<arrc_ir::Scalar, String>> = Vec::new();
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
            fields.push(match arrc_ref::csv_number(field) {
                Some(n) => Ok(arrc_ir::Scalar::from_literal(n, float)),
                None => Err(field.to_string()),
            });
        }
        rows += 1;
    }
    let cols = cols.unwrap_or(0);
    let shape = vec![rows, cols];
    if fields.iter().any(Result::is_err) {
        let items: Vec<arrc_ir::array::Item> = fields
            .into_iter()
            .map(|f| match f {
                Ok(s) => arrc_ir::array::Item::Simple(s),
                Err(text) => {
                    arrc_ir::array::Item::enclose(Array::vector(Data::Char(text.chars().collect())))
                }
            })
            .collect();
        return Ok(Array::new(shape, Data::Mixed(items.into())));
    }
    let items: Vec<arrc_ir::Scalar> = fields.into_iter().flatten().collect();
    let ty = items
        .iter()
        .map(|s| s.elem_type())
        .max()
        .unwrap_or(arrc_ir::ElemType::I32);
    let mut d = Data::with_capacity(ty, items.len());
    items.into_iter().for_each(|s| d.push(s));
    Ok(Array::new(shape, d))
}

/// The element types a raw binary file may hold (little-endian), by name.
pub const RAW_TYPES: &[&str] = &["u8", "i8", "i16", "u16", "i32", "u32", "i64", "f32", "f64"];

/// The raw little-endian numbers of type `dtype` (one of [`RAW_TYPES`]) in the file
/// at `path`, as an array of `shape` (a vector of them all when `None`). Unsigned
/// and narrow integers widen to i32 (u32 to i64).
pub fn read_raw(path: &Path, dtype: &str, shape: Option<&[usize]>) -> Result<Array, Error> {
    let bytes = std::fs::read(path).map_err(|e| file_error(path, e))?;
    let width = match dtype {
        "u8" | "i8" => 1,
        "i16" | "u16" => 2,
        "i32" | "u32" | "f32" => 4,
        "i64" | "f64" => 8,
        _ => {
            return Err(file_error(
                path,
                format!("no raw type {dtype:?}: use one of {}", RAW_TYPES.join(" ")),
            ))
        }
    };
    if bytes.len() % width != 0 {
        return Err(file_error(
            path,
            format!(
                "{} bytes are not a whole number of {dtype} ({width} bytes each)",
                bytes.len()
            ),
        ));
    }
    let n = bytes.len() / width;
    let shape = match shape {
        Some(s) if arrc_ir::array::element_count(s) == Some(n) => s.to_vec(),
        Some(s) => {
            return Err(file_error(
                path,
                format!("{n} {dtype} numbers do not make the shape {s:?}"),
            ))
        }
        None => vec![n],
    };
    let w = |c: &[u8]| -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        b
    };
    let chunks = bytes.chunks_exact(width);
    let data = match dtype {
        "u8" => Data::I32(chunks.map(|c| c[0] as i32).collect()),
        "i8" => Data::I32(chunks.map(|c| c[0] as i8 as i32).collect()),
        "i16" => Data::I32(
            chunks
                .map(|c| i16::from_le_bytes([c[0], c[1]]) as i32)
                .collect(),
        ),
        "u16" => Data::I32(
            chunks
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as i32)
                .collect(),
        ),
        "i32" => Data::I32(
            chunks
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        "u32" => Data::I64(
            chunks
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
                .collect(),
        ),
        "f32" => Data::F32(
            chunks
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        "i64" => Data::I64(chunks.map(|c| i64::from_le_bytes(w(c))).collect()),
        _ => Data::F64(chunks.map(|c| f64::from_le_bytes(w(c))).collect()),
    };
    if data.first_not_finite().is_some() {
        return Err(file_error(
            path,
            "holds a NaN or an infinity, which APL has not",
        ));
    }
    Ok(Array::new(shape, data))
}

/// `Array::from_npy(path)` and `a.to_npy(path)`: [`read_npy`] and [`write_npy`] as
/// methods (`use arrc::Npy;`).
///
/// ```
/// use arrc::{Array, Data, Npy};
/// let p = std::env::temp_dir().join(format!("arrc-doc-{}.npy", std::process::id()));
/// let a = Array::new(vec![2, 2], Data::F64(vec![0.5, 1.0, 1.5, 2.0]));
/// a.to_npy(&p).unwrap();
/// assert_eq!(Array::from_npy(&p).unwrap(), a);
/// # std::fs::remove_file(&p).ok();
/// ```
pub trait Npy: Sized {
    /// The array in the `.npy` file at `path` ([`read_npy`]).
    fn from_npy(path: impl AsRef<Path>) -> Result<Self, Error>;
    /// Writes this array to a `.npy` file at `path` ([`write_npy`]).
    fn to_npy(&self, path: impl AsRef<Path>) -> Result<(), Error>;
}

impl Npy for Array {
    fn from_npy(path: impl AsRef<Path>) -> Result<Array, Error> {
        read_npy(path.as_ref())
    }

    fn to_npy(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        write_npy(path.as_ref(), self)
    }
}

impl Session {
    /// Defines `name` as the numbers of the CSV file at `path` (see [`read_csv`]).
    pub fn set_csv(&mut self, name: &str, path: &Path) -> Result<(), Error> {
        let a = read_csv(path, self.float())?;
        self.set(name, a)
    }

    /// Defines `name` as the raw little-endian numbers in the file at `path` (see
    /// [`read_raw`]).
    pub fn set_raw(
        &mut self,
        name: &str,
        path: &Path,
        dtype: &str,
        shape: Option<&[usize]>,
    ) -> Result<(), Error> {
        let a = read_raw(path, dtype, shape)?;
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
    fn raw_files_and_csv_text() {
        let dir = std::env::temp_dir().join(format!("arrc-raw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("d.bin");
        let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.5]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        std::fs::write(&p, &bytes).unwrap();
        let m = read_raw(&p, "f32", Some(&[2, 3])).unwrap();
        assert_eq!(m.shape, [2, 3]);
        assert_eq!(m.data, Data::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.5]));
        assert_eq!(read_raw(&p, "u8", None).unwrap().shape, [24]);
        assert_eq!(
            read_raw(&p, "u32", Some(&[6])).unwrap().data,
            Data::I64(vec![
                1065353216, 1073741824, 1077936128, 1082130432, 1084227584, 1087373312
            ])
        );
        for (t, s) in [
            ("f64", Some(&[4][..])),
            ("i16", Some(&[5, 5][..])),
            ("f16", None),
        ] {
            let e = read_raw(&p, t, s).unwrap_err();
            assert!(e.message.contains("d.bin"), "{e}");
        }
        std::fs::write(
            &p,
            7u64.to_le_bytes()
                .iter()
                .chain(&[0u8])
                .copied()
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(read_raw(&p, "i64", None)
            .unwrap_err()
            .message
            .contains("whole number"));
        std::fs::write(&p, f32::NAN.to_le_bytes()).unwrap();
        assert!(read_raw(&p, "f32", None).is_err());
        let c = dir.join("t.csv");
        std::fs::write(&c, "name,n\nab,1\ncd,2\n").unwrap();
        let t = read_csv(&c, arrc_ir::ElemType::F32).unwrap();
        assert_eq!(t.shape, [3, 2]);
        assert_eq!(t.elem, arrc_ir::ElemType::Mixed);
        assert_eq!(
            t.data.item(2).open(),
            Array::vector(Data::Char(vec!['a', 'b']))
        );
        assert_eq!(
            t.data.item(5).open(),
            Array::scalar(arrc_ir::Scalar::I32(2))
        );
        std::fs::remove_dir_all(&dir).ok();
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
