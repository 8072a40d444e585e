//! `arrc._arrc`: the extension module behind the `arrc` Python package. Arrays cross
//! as `(type, shape, bytes)` triples (little-endian, C order) that `python/arrc`
//! turns into NumPy arrays and back, so this module needs no NumPy headers; nested
//! and mixed arrays cross as lists of such items.

use arrc::{Array, Backend, Data, ElemType, Error, Session};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

pyo3::create_exception!(
    _arrc,
    AplError,
    PyException,
    "An APL error: its class (`LENGTH ERROR`, …), message and span are in its args."
);

fn apl_error(e: Error) -> PyErr {
    AplError::new_err((
        e.class.name().to_string(),
        e.message.clone(),
        (e.span.start, e.span.end),
        e.within.clone(),
    ))
}

/// An array as Python sees it: `("f32", shape, bytes)` for numbers, `("char", shape,
/// str)` for characters, `("mixed", shape, [items])` for the rest, where an item is
/// such a triple (a simple scalar as a rank-0 one).
fn to_py<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyTuple>> {
    let shape = PyTuple::new(py, &a.shape)?;
    let ty = a.elem.to_string();
    let payload: Bound<'py, PyAny> = match &a.data {
        Data::Char(c) => c.iter().collect::<String>().into_pyobject(py)?.into_any(),
        Data::Mixed(items) => {
            let list = PyList::empty(py);
            for it in items.iter() {
                list.append(to_py(py, &it.open())?)?;
            }
            list.into_any()
        }
        Data::Bool(v) => {
            PyBytes::new(py, &v.iter().map(|&b| b as u8).collect::<Vec<_>>()).into_any()
        }
        d => PyBytes::new(py, &d.to_bytes()).into_any(),
    };
    PyTuple::new(
        py,
        [ty.into_pyobject(py)?.into_any(), shape.into_any(), payload],
    )
}

/// The array of a `(type, shape, bytes)` triple (numbers only; `python/arrc` sends
/// characters as `("char", shape, str)`).
fn from_py(ty: &str, shape: Vec<usize>, payload: &Bound<'_, PyAny>) -> PyResult<Array> {
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    let elem =
        ElemType::parse(ty).ok_or_else(|| bad(format!("arrc has no element type {ty:?}")))?;
    let n = arrc::ElemType::size(elem);
    let data = match elem {
        ElemType::Char => Data::Char(payload.extract::<String>()?.chars().collect()),
        ElemType::Bool => Data::Bool(
            payload
                .extract::<Vec<u8>>()?
                .into_iter()
                .map(|b| b != 0)
                .collect(),
        ),
        ElemType::Mixed => return Err(bad("nested arrays are passed as lists".into())),
        _ => {
            let bytes: Vec<u8> = payload.extract()?;
            if bytes.len() % n != 0 {
                return Err(bad(format!("{} bytes are not {ty} numbers", bytes.len())));
            }
            Data::from_bytes(elem, &bytes, bytes.len() / n)
        }
    };
    if data.first_not_finite().is_some() {
        return Err(bad("NaN and infinities are not APL numbers".into()));
    }
    Array::try_new(shape, data).map_err(bad)
}

/// What `eval` gives Python: the value (a triple, or None), the output lines shown,
/// the notes.
type Evaluated<'py> = (Option<Bound<'py, PyTuple>>, Vec<String>, Vec<String>);

/// A session: a workspace of arrays (kept on the Vulkan device between calls) and
/// functions. Not shareable between threads (it holds device arrays by `Rc`): make
/// one per thread.
#[pyclass(unsendable, module = "arrc._arrc")]
struct RawSession {
    s: Session,
}

#[pymethods]
impl RawSession {
    /// `backend`: "auto" (Vulkan when there is a device, else the CPU reference),
    /// "vulkan" or "cpu"; `float`: "f32" or "f64".
    #[new]
    #[pyo3(signature = (backend = "auto", float = "f32"))]
    fn new(backend: &str, float: &str) -> PyResult<Self> {
        let b = match backend {
            "auto" => Backend::Auto,
            "vulkan" => Backend::Vulkan,
            "cpu" => Backend::Cpu,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "backend {other:?}: use \"auto\", \"vulkan\" or \"cpu\""
                )))
            }
        };
        let mut s = Session::new(b).map_err(apl_error)?;
        match float {
            "f32" => s.set_float(ElemType::F32),
            "f64" => s.set_float(ElemType::F64),
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "float {other:?}: use \"f32\" or \"f64\""
                )))
            }
        }
        Ok(RawSession { s })
    }

    /// Defines `name` as the array of a `(type, shape, payload)` triple.
    fn set(
        &mut self,
        name: &str,
        ty: &str,
        shape: Vec<usize>,
        payload: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let a = from_py(ty, shape, payload)?;
        self.s.set(name, a).map_err(apl_error)
    }

    /// The value of array `name` as a triple, or None.
    fn get<'py>(&mut self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match self.s.get(name) {
            Some(a) => Ok(Some(to_py(py, &a.clone())?)),
            None => Ok(None),
        }
    }

    /// Runs `src`: `(value triple or None, output lines, notes)`.
    fn eval<'py>(&mut self, py: Python<'py>, src: &str) -> PyResult<Evaluated<'py>> {
        let r = self.s.eval(src);
        let shown = self.s.take_output();
        let out = r.map_err(apl_error)?;
        let v = match &out.value {
            Some(a) => Some(to_py(py, a)?),
            None => None,
        };
        Ok((v, shown, out.notes))
    }

    /// The device's name, or None on the CPU reference.
    fn device(&self) -> Option<String> {
        self.s.device().map(|d| d.name.clone())
    }

    /// The workspace's array names.
    fn variables(&self) -> Vec<String> {
        self.s.variables()
    }
}

/// The version of arrc this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _arrc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawSession>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("AplError", m.py().get_type::<AplError>())?;
    Ok(())
}
