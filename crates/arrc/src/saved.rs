//! Workspace files (`)save FILE`, `)load FILE`, [`Session::save_workspace`],
//! [`Session::load_workspace`]): a session's arrays, functions and system variables
//! in one JSON document of arrc's own, documented in `docs/WORKSPACE.md`.
//!
//! Arrays keep their exact type and values (an f32 stays an f32, an i64 beyond 2^53
//! stays exact, characters stay characters, nested arrays keep their items and an
//! empty one its prototype); functions are kept as the text they were defined with
//! and defined again on load.

use crate::{Error, ErrorClass, Session};
use arrc_ir::array::{Array, Data, ElemType, Item, Items, Scalar};
use serde_json::{json, Map, Value};
use std::path::Path;

/// The `format` field of a workspace file this version writes and reads.
pub const FORMAT: &str = "arrc workspace 1";

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorClass::FileName,
        format!("{}: not an arrc workspace: {what}", path.display()),
        0..0,
    )
}

/// A scalar as `[type, value]` (`["f32", 0.5]`, `["char", "a"]`).
fn scalar_json(s: Scalar) -> Value {
    let v = match s {
        Scalar::Bool(b) => json!(b as u8),
        Scalar::I32(x) => json!(x),
        Scalar::I64(x) => json!(x),
        Scalar::F32(x) => json!(x as f64),
        Scalar::F64(x) => json!(x),
        Scalar::Char(c) => json!(c.to_string()),
    };
    json!([s.elem_type().to_string(), v])
}

fn item_json(it: &Item) -> Value {
    match it {
        Item::Simple(s) => scalar_json(*s),
        Item::Boxed(a) => array_json(a),
    }
}

/// `{"shape":[…],"type":"…","data":…}`: numbers as a list, characters as a string,
/// the items of a mixed or nested array as a list of scalars and arrays (with the
/// prototype of an empty one).
pub fn array_json(a: &Array) -> Value {
    let data = match &a.data {
        Data::Bool(v) => json!(v.iter().map(|&b| b as u8).collect::<Vec<_>>()),
        Data::I32(v) => json!(v),
        Data::I64(v) => json!(v),
        Data::F32(v) => json!(v.iter().map(|&x| x as f64).collect::<Vec<_>>()),
        Data::F64(v) => json!(v),
        Data::Char(v) => json!(v.iter().collect::<String>()),
        Data::Mixed(items) => json!(items.iter().map(item_json).collect::<Vec<_>>()),
    };
    let mut o = json!({"shape": a.shape, "type": a.elem.to_string(), "data": data});
    if let (Data::Mixed(items), true) = (&a.data, a.is_empty()) {
        if let Some(p) = items.prototype() {
            o["prototype"] = item_json(&p);
        }
    }
    o
}

fn scalar_from(v: &Value) -> Result<Scalar, String> {
    let [t, x] = v.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(format!("a scalar is [type, value], not {v}"));
    };
    let ty = t
        .as_str()
        .and_then(ElemType::parse)
        .ok_or_else(|| format!("no element type {t}"))?;
    let num = |x: &Value| x.as_f64().ok_or_else(|| format!("{x} is not a number"));
    Ok(match ty {
        ElemType::Bool => Scalar::Bool(num(x)? != 0.0),
        ElemType::I32 => Scalar::I32(
            x.as_i64()
                .and_then(|i| i32::try_from(i).ok())
                .ok_or("an i32")?,
        ),
        ElemType::I64 => Scalar::I64(x.as_i64().ok_or("an i64")?),
        ElemType::F32 => Scalar::F32(finite_f32(num(x)?)?),
        ElemType::F64 => Scalar::F64(num(x)?),
        ElemType::Char => {
            let s = x.as_str().ok_or("a character")?;
            let mut cs = s.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Scalar::Char(c),
                _ => return Err(format!("{s:?} is not one character")),
            }
        }
        ElemType::Mixed => return Err("a scalar of type mixed".into()),
    })
}

fn item_from(v: &Value) -> Result<Item, String> {
    if v.is_object() {
        Ok(Item::enclose(array_from(v)?))
    } else {
        Ok(Item::Simple(scalar_from(v)?))
    }
}

/// The array [`array_json`] wrote.
pub fn array_from(v: &Value) -> Result<Array, String> {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .ok_or("an array needs a shape")?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize).ok_or("a shape of counts"))
        .collect::<Result<_, _>>()?;
    let ty = v["type"]
        .as_str()
        .and_then(ElemType::parse)
        .ok_or("an array needs a type")?;
    let list = || v["data"].as_array().ok_or("data must be a list");
    let nums = || -> Result<Vec<f64>, String> {
        list()?
            .iter()
            .map(|x| x.as_f64().ok_or_else(|| format!("{x} is not a number")))
            .collect()
    };
    let ints = || -> Result<Vec<i64>, String> {
        list()?
            .iter()
            .map(|x| x.as_i64().ok_or_else(|| format!("{x} is not an integer")))
            .collect()
    };
    let data = match ty {
        ElemType::Bool => Data::Bool(ints()?.into_iter().map(|b| b != 0).collect()),
        ElemType::I32 => Data::I32(
            ints()?
                .into_iter()
                .map(|i| i32::try_from(i).map_err(|_| format!("{i} is not an i32")))
                .collect::<Result<_, _>>()?,
        ),
        ElemType::I64 => Data::I64(ints()?),
        ElemType::F32 => Data::F32(
            nums()?
                .into_iter()
                .map(finite_f32)
                .collect::<Result<_, _>>()?,
        ),
        ElemType::F64 => Data::F64(nums()?),
        ElemType::Char => Data::Char(
            v["data"]
                .as_str()
                .ok_or("characters as a string")?
                .chars()
                .collect(),
        ),
        ElemType::Mixed => {
            let items: Items = list()?.iter().map(item_from).collect::<Result<_, _>>()?;
            match (items.is_empty(), v.get("prototype")) {
                (true, Some(p)) => Data::Mixed(Items::empty_of(&item_from(p)?)),
                _ => Data::Mixed(items),
            }
        }
    };
    Array::try_new(shape, data)
}

/// The document with each top-level field, function and array on lines of its own
/// (an array's data on one line, however long).
fn layout(doc: &Value) -> String {
    let one = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let mut out = String::from("{\n");
    let fields = doc
        .as_object()
        .map(|o| o.iter().collect::<Vec<_>>())
        .unwrap_or_default();
    for (i, (k, v)) in fields.iter().enumerate() {
        out += &format!("  {}: ", one(&json!(k)));
        match v {
            Value::Object(m) if *k == "arrays" => {
                out += "{\n";
                let rows: Vec<String> = m
                    .iter()
                    .map(|(n, a)| format!("    {}: {}", one(&json!(n)), one(a)))
                    .collect();
                out += &rows.join(",\n");
                out += "\n  }";
            }
            Value::Array(fs) => {
                out += "[\n";
                let rows: Vec<String> = fs.iter().map(|f| format!("    {}", one(f))).collect();
                out += &rows.join(",\n");
                out += "\n  ]";
            }
            v => out += &one(v),
        }
        out += if i + 1 < fields.len() { ",\n" } else { "\n" };
    }
    out + "}\n"
}

impl Session {
    /// Writes the workspace to `path` ([`FORMAT`]): every array (read back from the
    /// device where it is only there), every function defined in this session by
    /// its text, and ⎕IO ⎕PP ⎕PW ⎕CT ⎕RL ⎕FR. Returns the count of names saved.
    pub fn save_workspace(&mut self, path: &Path) -> Result<usize, Error> {
        let mut arrays = Map::new();
        for n in self.variables() {
            let a = self.get(&n).ok_or_else(|| {
                Error::new(
                    ErrorClass::Device,
                    format!("{n} could not be read back to save it"),
                    0..0,
                )
            })?;
            arrays.insert(n, array_json(a));
        }
        let mut functions = vec![];
        let mut skipped = vec![];
        // In the order they were defined: a function's text names the functions
        // defined before it, which a parser must know to read it.
        let mut names = self.function_names();
        names.sort_by_key(|n| self.definition_order(n));
        for n in names {
            match self.definition_text(&n) {
                Some(text) => functions.push(json!({"name": n, "source": text})),
                None => skipped.push(n),
            }
        }
        if !skipped.is_empty() {
            return Err(Error::new(
                ErrorClass::Unsupported,
                format!(
                    "the text of {} is not known (defined other than by a statement), so it cannot be saved",
                    skipped.join(" ")
                ),
                0..0,
            ));
        }
        let e = &self.env;
        let doc = json!({
            "format": FORMAT,
            "system": {
                "⎕IO": e.io, "⎕PP": e.pp, "⎕PW": e.pw, "⎕CT": e.ct,
                "⎕RL": [e.rng.seed, e.rng.next], "⎕FR": e.float.fr(),
            },
            "functions": functions,
            "arrays": arrays,
        });
        let n = functions.len() + doc["arrays"].as_object().map_or(0, Map::len);
        let text = layout(&doc);
        std::fs::write(path, text).map_err(|x| {
            Error::new(
                ErrorClass::FileName,
                format!("{}: {x}", path.display()),
                0..0,
            )
        })?;
        Ok(n)
    }

    /// Replaces the workspace with the one saved in `path` (as `)load`: the names
    /// there, and its system variables). The file is read and checked whole first:
    /// a bad file leaves the workspace as it was.
    pub fn load_workspace(&mut self, path: &Path) -> Result<usize, Error> {
        let text = std::fs::read_to_string(path).map_err(|x| {
            Error::new(
                ErrorClass::FileName,
                format!("{}: {x}", path.display()),
                0..0,
            )
        })?;
        let doc: Value = serde_json::from_str(&text).map_err(|x| bad(path, x))?;
        if doc["format"] != FORMAT {
            return Err(bad(
                path,
                format!("its format is {}, not {FORMAT:?}", doc["format"]),
            ));
        }
        let mut arrays = vec![];
        for (n, v) in doc["arrays"]
            .as_object()
            .ok_or_else(|| bad(path, "no arrays"))?
        {
            arrays.push((
                n.clone(),
                array_from(v).map_err(|m| bad(path, format!("{n}: {m}")))?,
            ));
        }
        let mut functions = vec![];
        for f in doc["functions"]
            .as_array()
            .ok_or_else(|| bad(path, "no functions"))?
        {
            match (f["name"].as_str(), f["source"].as_str()) {
                (Some(n), Some(s)) => functions.push((n.to_string(), s.to_string())),
                _ => {
                    return Err(bad(
                        path,
                        format!("a function needs a name and a source: {f}"),
                    ))
                }
            }
        }
        // The functions are defined once in a scratch session first: one that
        // cannot be read leaves this workspace as it was.
        let mut scratch = Session::new(crate::Backend::Cpu)?;
        for (n, src) in &functions {
            scratch
                .eval(&format!("{n}←{src}"))
                .map_err(|e| bad(path, format!("{n}: {}: {}", e.class.name(), e.message)))?;
        }
        let sys = &doc["system"];
        let int = |k: &str| sys[k].as_i64();
        let io = int("⎕IO").filter(|v| (0..=1).contains(v));
        let pp = int("⎕PP").filter(|v| (1..=34).contains(v));
        let pw = int("⎕PW").filter(|v| (42..=32767).contains(v));
        let fr = int("⎕FR").and_then(ElemType::from_fr);
        let ct = sys["⎕CT"]
            .as_f64()
            .filter(|c| (0.0..=arrc_ir::scalar::MAX_COMPARISON_TOLERANCE).contains(c));
        let rl = match sys["⎕RL"].as_array().map(Vec::as_slice) {
            Some([seed, next]) => seed.as_u64().zip(next.as_u64()),
            _ => None,
        };
        let (Some(io), Some(pp), Some(pw), Some(fr), Some(ct), Some((seed, next))) =
            (io, pp, pw, fr, ct, rl)
        else {
            return Err(bad(
                path,
                "its system variables are missing or out of range",
            ));
        };
        self.clear();
        self.env.io = io;
        self.env.pp = pp as usize;
        self.env.pw = pw as usize;
        self.env.float = fr;
        self.env.ct = ct;
        arrc_ir::scalar::set_comparison_tolerance(ct);
        self.env.rng = arrc_ir::random::Rng { seed, next };
        arrc_ir::random::set_device_rng(Some(self.env.rng));
        let count = arrays.len() + functions.len();
        for (n, s) in functions {
            self.set_source_name(&path.display().to_string());
            let r = self.eval(&format!("{n}←{s}"));
            self.set_source_name("input");
            r?;
        }
        for (n, a) in arrays {
            self.set(&n, a)?;
        }
        Ok(count)
    }
}

/// A saved f32 value, which must be a finite f32 (APL has no infinity; `1e39` in
/// a hand-edited file would become one).
fn finite_f32(x: f64) -> Result<f32, String> {
    let f = x as f32;
    if f.is_finite() {
        Ok(f)
    } else {
        Err(format!("{x} is not a finite f32 number"))
    }
}
